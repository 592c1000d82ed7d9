"""Bring notebooks' code to the house style without changing what it does: lines <= 110 characters, short exported cells.

For every code cell of the notebooks given (default: all of `nbs/`):

1. a long comment is wrapped (a trailing one moves above its line);
2. a statement with a long line is reformatted alone by black (its string splitting on, quotes kept), the rest of
   the cell untouched; a one-line docstring stays one line;
3. an exported cell longer than `--max-lines` is split at its top-level statements into several exported cells.

Every change is checked: the cell's syntax tree (docstrings compared by their words) must be what it was, else the
cell is left as it was. Needs black (`pip install black`). Usage: python tools/restyle_nbs.py [NOTEBOOK ...]
"""
import argparse, ast, io, json, re, secrets, sys, textwrap, tokenize
from pathlib import Path

import black
from black.mode import Preview

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 110
DIRECTIVE = re.compile(r'^\s*#\|')


def _mode(width: int) -> black.Mode:
    return black.Mode(line_length=max(width, 40), string_normalization=False, preview=True,
                      enabled_features={Preview.string_processing}, magic_trailing_comma=False)


class _Docs(ast.NodeTransformer):
    "Docstrings reduced to their words, so a rewrapped docstring compares equal."
    def _strip(self, node):
        body = getattr(node, 'body', None)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body[0].value.value = ' '.join(body[0].value.value.split())
        self.generic_visit(node)
        return node
    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Module = _strip


def same_code(a: str, b: str) -> bool:
    "Whether two sources have the same syntax tree (docstrings compared by their words)."
    try: ta, tb = ast.parse(a), ast.parse(b)
    except SyntaxError: return False
    return ast.dump(_Docs().visit(ta)) == ast.dump(_Docs().visit(tb))


def _comment_at(line: str) -> int | None:
    "Where a line's comment starts (None if it has none), found with the tokenizer."
    try: toks = list(tokenize.generate_tokens(io.StringIO(line + '\n').readline))
    except (tokenize.TokenError, IndentationError, SyntaxError): return None
    return next((t.start[1] for t in toks if t.type == tokenize.COMMENT), None)


def wrap_comments(lines: list[str]) -> list[str]:
    "Long comments wrapped; a long trailing comment moved above its line."
    out = []
    for line in lines:
        at = _comment_at(line) if len(line) > WIDTH and '#' in line else None
        if at is None or DIRECTIVE.match(line) or 'http' in line[at:]: out.append(line); continue
        indent = line[:len(line) - len(line.lstrip())]
        text, code = line[at:].lstrip('#').strip(), line[:at].rstrip()
        wrapped = textwrap.wrap(text, WIDTH - len(indent) - 2, break_long_words=False, break_on_hyphens=False)
        out += [f'{indent}# {w}' for w in wrapped] + ([code] if code.strip() else [])
    return out


def _tokens(src: str):
    "The cell's tokens, each with the brackets open before it: (column of the bracket, where it closes)."
    toks, stack, closes = [], [], {}
    for t in tokenize.generate_tokens(io.StringIO(src).readline):
        toks.append((t, list(stack)))
        if t.type == tokenize.OP and t.string in '([{': stack.append(t.start)
        elif t.type == tokenize.OP and t.string in ')]}' and stack: closes[stack.pop()] = t.start
    return [(t, [(o[1], closes.get(o, (10**9, 0))) for o in opens]) for t, opens in toks]


def _string_cut(tok, limit: int) -> int | None:
    "Where to cut a one-line string token so its first piece ends by column `limit` (after a space), or None."
    m = re.match(r'([rRbBuUfF]{0,2})(["\'])', tok.string)
    if not m or tok.string[len(m.group(0)):].startswith(m.group(2) * 2) or tok.start[0] != tok.end[0]: return None
    pre, start = m.group(0), tok.start[1]
    fmt, depth, best = 'f' in m.group(1).lower(), 0, None
    body = tok.string[len(pre):-1]
    for i, ch in enumerate(body):
        if fmt and ch == '{': depth += 1
        elif fmt and ch == '}': depth -= 1
        col = start + len(pre) + i + 1          # the column after this character
        if ch == ' ' and depth == 0 and col + 1 <= limit and i + 1 < len(body) and body[i - 1:i] != '\\':
            best = len(pre) + i + 1
    return best


def compact_wrap(src: str, row: int) -> str | None:
    "Line `row` broken once, the rest aligned with its open bracket: after a comma, or inside a string."
    try: toks = _tokens(src)
    except (tokenize.TokenError, IndentationError, SyntaxError): return None
    lines = src.split('\n')
    line, best = lines[row - 1], None
    for t, opens in toks:
        if t.start[0] != row or not opens or opens[-1][0] > 60: continue
        col, (crow, ccol) = opens[-1]
        short = crow == row and ccol - t.end[1] < 20          # the bracket closes soon after: not worth a break
        if t.type == tokenize.OP and t.string == ',' and t.end[1] <= WIDTH and t.end[1] < len(line.rstrip()) \
                and not short:
            cand = (len(opens), -t.end[1], t.end[1], col + 1, None)
        elif t.type == tokenize.NAME and t.string in ('for', 'if', 'else', 'and', 'or') and t.start[1] <= WIDTH \
                and not short:                                # before a clause of a comprehension or an operator
            cand = (len(opens), -t.start[1], t.start[1], col + 1, None)
        elif t.type == tokenize.STRING and t.start[1] < WIDTH - 10 and (cut := _string_cut(t, WIDTH - 1)):
            cand = (len(opens) + 1, -(t.start[1] + cut), t.start[1] + cut, col + 1, t)
        else: continue
        if t.end[1] - (len(line) - len(line.lstrip())) < 30 and t.type != tokenize.STRING: continue   # too short
        if best is None or cand[:2] < best[:2]: best = cand
    if best is None: return None
    at, indent, tok = best[2:]
    if tok is None: first, rest = line[:at].rstrip(), line[at:].lstrip()
    else:
        pre = re.match(r'[rRbBuUfF]{0,2}["\']', tok.string).group(0)
        first, rest = line[:at] + pre[-1], pre + line[at:]
    if not rest.strip() or len(first) > WIDTH: return None
    return '\n'.join(lines[:row - 1] + [first, ' ' * indent + rest] + lines[row:])


def _statements(tree: ast.AST) -> list[ast.stmt]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]


def _target(tree: ast.AST, lines: list[str], row: int):
    "The innermost statement holding line `row` (1-based) that starts its own line: (first, last) line numbers."
    best = None
    for n in _statements(tree):
        first = min([n.lineno] + [d.lineno for d in getattr(n, 'decorator_list', [])])
        if not first <= row <= n.end_lineno: continue
        if lines[first - 1][:n.col_offset].strip(): continue          # shares its line with another statement
        body = getattr(n, 'body', None)
        if body and row < body[0].lineno and body[0].lineno > n.lineno:
            span = (first, body[0].lineno - 1, 'header')               # a long header, its body on later lines
        else: span = (first, n.end_lineno, 'whole')
        if best is None or span[1] - span[0] < best[1] - best[0]: best = span
    return best


def _docstring(lines: list[str], row: int) -> list[str] | None:
    "A long one-line docstring at `row` as a wrapped triple-quoted one, or None (house style keeps it one line)."
    line = lines[row - 1]
    m = re.fullmatch(r'(\s*)(["\'])([^"\'\\]*)\2', line)
    if not m: return None
    indent, text = m.group(1), m.group(3)
    wrapped = textwrap.wrap(text, WIDTH - len(indent) - 3, break_long_words=False, break_on_hyphens=False)
    if len(wrapped) < 2: return None
    return [f'{indent}"""{wrapped[0]}'] + [f'{indent}{w}' for w in wrapped[1:-1]] + [f'{indent}{wrapped[-1]}"""']


def _black(text: str, indent: str, header: bool) -> str | None:
    "`text` (one statement, or a compound statement's header) reformatted by black at the indent it had."
    body = textwrap.dedent(text)
    if header: body += '\n' + ' ' * 4 + 'pass'
    try: out = black.format_str(body, mode=_mode(WIDTH - len(indent))).rstrip('\n')
    except Exception: return None
    if header:
        out_lines = out.split('\n')
        if out_lines[-1].strip() != 'pass': return None
        out = '\n'.join(out_lines[:-1])
    return textwrap.indent(out, indent, lambda l: l.strip() != '')


def fix_long_lines(src: str) -> str:
    "Each statement holding a long line reformatted alone (or its docstring wrapped), if the code stays the same."
    for _ in range(200):
        lines = src.split('\n')
        try: tree = ast.parse(src)
        except SyntaxError: return src
        todo = [i + 1 for i, l in enumerate(lines) if len(l) > WIDTH and not DIRECTIVE.match(l)]
        changed = False
        for row in todo:
            if _docstring(lines, row): continue             # a one-line docstring stays one line
            if (cand := compact_wrap(src, row)) and same_code(src, cand): pass
            else:
                span = _target(tree, lines, row)
                if span is None: continue
                first, last, kind = span
                chunk = lines[first - 1:last]
                indent = chunk[0][:len(chunk[0]) - len(chunk[0].lstrip())]
                out = _black('\n'.join(chunk), indent, kind == 'header')
                if out is None or out.split('\n') == chunk: continue
                cand = '\n'.join(lines[:first - 1] + out.split('\n') + lines[last:])
            if same_code(src, cand) and _excess(cand) < _excess(src):
                src, changed = cand, True
                break
        if not changed: return src
    return src


def _excess(src: str) -> int: return sum(max(0, len(l) - WIDTH) for l in src.split('\n'))


def split_cell(src: str, max_lines: int) -> list[str]:
    "An exported cell's code split at top-level statements into parts of about `max_lines` lines."
    lines = src.split('\n')
    head = [l for l in lines if DIRECTIVE.match(l)]
    body = [l for l in lines if not DIRECTIVE.match(l)]
    code = '\n'.join(body)
    try: tree = ast.parse(code)
    except SyntaxError: return [src]
    if len(body) <= max_lines or len(tree.body) < 2: return [src]
    if all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body): return [src]
    starts = []
    for n in tree.body:
        s = min([n.lineno] + [d.lineno for d in getattr(n, 'decorator_list', [])]) - 1
        while s > 0 and body[s - 1].lstrip().startswith('#'): s -= 1     # comments above go with their statement
        starts.append(s)
    units = [body[a:b] for a, b in zip(starts, starts[1:] + [len(body)])]
    units[0] = body[:starts[1]] if len(starts) > 1 else body
    parts, cur = [], []
    for u in units:
        u = _trim(u)
        if cur and len(cur) + len(u) > max_lines: parts.append(cur); cur = []
        cur = cur + ([''] if cur else []) + u
    parts.append(cur)
    out = ['\n'.join(head + p) for p in parts if any(l.strip() for l in p)]
    return out if same_code(code, '\n'.join('\n'.join(l for l in p.split('\n') if not DIRECTIVE.match(l)) for p in out)) \
        else [src]


def _trim(u: list[str]) -> list[str]:
    while u and not u[0].strip(): u = u[1:]
    while u and not u[-1].strip(): u = u[:-1]
    return u


def exported(src: str) -> bool: return any(re.match(r'\s*#\|\s*exports?\b', l) for l in src.split('\n'))


def restyle(nb: dict, max_lines: int) -> dict:
    "The notebook with its code cells restyled and its long exported cells split."
    cells = []
    for c in nb['cells']:
        if c['cell_type'] != 'code': cells.append(c); continue
        src = ''.join(c['source'])
        new = fix_long_lines('\n'.join(wrap_comments(src.split('\n'))))
        if not same_code(_code(src), _code(new)): new = src
        parts = split_cell(new, max_lines) if exported(new) else [new]
        for k, p in enumerate(parts):
            d = dict(c, source=p.splitlines(True))
            if k: d = dict(d, id=secrets.token_hex(4), outputs=[], execution_count=None)
            cells.append(d)
    return dict(nb, cells=cells)


def _code(src: str) -> str: return '\n'.join(l for l in src.split('\n') if not l.lstrip().startswith(('%', '!')))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('notebooks', nargs='*', type=Path)
    ap.add_argument('--max-lines', type=int, default=15, help='split exported cells longer than this (default 15)')
    args = ap.parse_args(argv)
    for p in args.notebooks or sorted((ROOT / 'nbs').rglob('*.ipynb')):
        nb = json.loads(p.read_text())
        new = restyle(nb, args.max_lines)
        if new != nb: p.write_text(json.dumps(new, indent=1, ensure_ascii=False) + '\n'); print('restyled', p)


if __name__ == '__main__': main()

"""Build the docs site in `_docs/` from nbdev's processed notebooks, with MkDocs and the Material theme, fully offline.

`nbdev-docs` needs Quarto, which cannot be installed here, so this is the check on these machines; `nbs/_quarto.yml`
stays as it is for users who have Quarto. The pipeline:

1. `nbdev-proc-nbs` (run again when a notebook is newer than its processed copy) writes `_proc/`: the notebooks with
   nbdev's processing applied, so every `show_doc` cell holds the signature and docstring of an exported name;
2. each processed notebook becomes one Markdown page under `_docs_build/docs/` (named by its `output-file`, as Quarto
   names it): source cells as code blocks, outputs as text, tables and figures (written as image files, never inlined),
   widget state dropped (every explorer leaves a static picture), long text outputs cut;
3. the index is the README; the navigation follows `nbs/sidebar.yml`;
4. `mkdocs build` with `tools/mkdocs.yml`: navigation, a table of contents per page, client-side search (lunr, in the
   page), no web fonts and no CDN scripts, so the site loads nothing from the network.

Usage: python tools/render_docs.py [OUT]     (default OUT: _docs)
"""
import json, os, re, shutil, subprocess, sys, tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
NBS, PROC, BUILD = ROOT / 'nbs', ROOT / '_proc', ROOT / '_docs_build'
URLS = tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']['urls']
DOCS_URL, REPO_URL = URLS['Documentation'], URLS['Repository']     # the one setting
COLAB_BADGE_URL = 'https://colab.research.google.com/assets/colab-badge.svg'
GUIDES = ('glossary.md',)             # top-level pages that are not API pages
MAX_TEXT = 3000                       # characters of one text output kept on the page
DIRECTIVE = re.compile(r'^\s*#\|\s*([\w-]+)\s*:?\s*(.*)$')
IMAGES = {'image/png': 'png', 'image/jpeg': 'jpg', 'image/svg+xml': 'svg', 'image/gif': 'gif'}
BADGE = ('<svg xmlns="http://www.w3.org/2000/svg" width="117" height="20"><rect width="117" height="20" rx="3" fill="#555"/>'
         '<rect x="50" width="67" height="20" rx="3" fill="#f9ab00"/><g fill="#fff" font-family="Verdana,sans-serif" '
         'font-size="11"><text x="7" y="14">Open in</text><text x="58" y="14">Colab</text></g></svg>')


def processed(force: bool = False) -> Path:
    "`_proc/`, brought up to date with `nbdev-proc-nbs` when a notebook changed since it was processed."
    nbs = [p for p in NBS.rglob('*.ipynb') if '.ipynb_checkpoints' not in p.parts]
    stale = force or any(not (PROC / p.relative_to(NBS)).exists()
                         or (PROC / p.relative_to(NBS)).stat().st_mtime < p.stat().st_mtime for p in nbs)
    # the command beside this interpreter, so that it runs from a venv that is not activated
    beside = Path(sys.executable).parent / 'nbdev-proc-nbs'
    command = str(beside) if beside.exists() else (shutil.which('nbdev-proc-nbs') or 'nbdev-proc-nbs')
    if stale and (r := subprocess.run([command, '--force'], cwd=ROOT, capture_output=True, text=True)).returncode:
        raise RuntimeError(f'nbdev-proc-nbs failed:\n{(r.stdout + r.stderr)[-3000:]}')
    return PROC


def front_matter(nb: dict) -> dict:
    "The YAML front matter nbdev puts in a processed notebook's first (raw) cell."
    c = nb['cells'][0] if nb['cells'] else {}
    src = ''.join(c.get('source', ''))
    if c.get('cell_type') != 'raw' or not src.startswith('---'): return {}
    return yaml.safe_load(src.strip().strip('-')) or {}


def page_path(rel: Path, nb: dict) -> Path:
    "Where a notebook's page goes, relative to the docs: its `output-file`, in the notebook's folder, as `.md`."
    out = front_matter(nb).get('output-file') or rel.with_suffix('.html').name
    return rel.parent / Path(out).with_suffix('.md')


def _text(s) -> str: return ''.join(s) if isinstance(s, list) else s


def _cut(s: str) -> str:
    return s if len(s) <= MAX_TEXT else s[:MAX_TEXT] + f'\n… ({len(s) - MAX_TEXT:,} more characters)'


def _fence(s: str, lang: str = 'text') -> str:
    ticks = '`' * max(3, max((len(m) for m in re.findall(r'`+', s)), default=0) + 1)
    return f'{ticks}{lang}\n{s.rstrip()}\n{ticks}'


SOURCE_LINK = re.compile(r'\[source\]\(\S*?/blob/\w+/([\w/]+)\.py#L\d+\)')
SIGNATURE = re.compile(r'```python\ndef (\w+)\(\n    \*\*data:\s*Any\n\)->None:\n```')


def _notes_in(src: str) -> list[tuple[str, str, str, str]]:
    "Each field written in one class body's source: (type, default, the comment beside or above it, its name)."
    import ast, io, textwrap, tokenize
    src = textwrap.dedent(src)
    comments = {t.start[0]: t.string.lstrip('# ').strip() for t in tokenize.generate_tokens(io.StringIO(src).readline)
                if t.type == tokenize.COMMENT}
    lines, notes = src.splitlines(), []
    for node in ast.parse(src).body[0].body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)): continue
        above = comments.get(node.lineno - 1) if lines[node.lineno - 2].lstrip().startswith('#') else None
        note = comments.get(node.end_lineno) or above or ''
        default = ast.unparse(node.value) if node.value is not None else 'required'
        notes.append((ast.unparse(node.annotation), default, note, node.target.id))
    return notes


def _field_notes(cls) -> dict[str, tuple[str, str, str]]:
    "Each field written in the class bodies of `cls` and its bases: (type, default, the comment beside or above it)."
    import inspect
    notes = {}
    for k in reversed([c for c in cls.__mro__ if hasattr(c, 'model_fields') and c.__module__ != 'pydantic.main']):
        try: src = inspect.getsource(k)
        except (OSError, TypeError): continue
        notes.update({field: (kind, default, note) for kind, default, note, field in _notes_in(src)})
    return notes


def _cell(text: str) -> str: return text.replace('|', '\\|').replace('\n', ' ')


def pydantic_fields(md: str) -> str:
    "A `show_doc` entry of a pydantic model with a table of its fields (name, type, default, what it is) for a signature."
    import importlib
    link, sig = SOURCE_LINK.search(md), SIGNATURE.search(md)
    if not (link and sig): return md
    try: cls = getattr(importlib.import_module(link.group(1).replace('/', '.')), sig.group(1))
    except (ImportError, AttributeError): return md
    if not hasattr(cls, 'model_fields'): return md
    notes = _field_notes(cls)
    rows = ['| field | type | default | what it is |', '|---|---|---|---|']
    for name, f in cls.model_fields.items():
        kind, default, note = notes.get(name, (getattr(f.annotation, '__name__', str(f.annotation)), '', ''))
        note = note or (f.description or '')
        rows.append(f'| `{name}` | `{_cell(kind)}` | `{_cell(default)}` | {_cell(note)} |')
    table = '\n'.join(rows) if cls.model_fields else '*No fields.*'
    own_doc = cls.__dict__.get('__doc__') is not None     # else show_doc shows pydantic's BaseModel text: dropped
    return md[:sig.start()] + table + (md[sig.end():] if own_doc else '\n')


SHOW_DOC = re.compile(r'^show_doc\((\w+)\)$')


def _signature(name: str, node) -> str:
    "A `def`/`class` line as nbdev writes it: one line, or one argument a line when it is long."
    if isinstance(node, __import__('ast').ClassDef):
        init = next((n for n in node.body if getattr(n, 'name', '') == '__init__'), None)
        if init is None: return f'class {name}({", ".join(__import__("ast").unparse(b) for b in node.bases)}):'
        node, kind = init, 'class'
    else: kind = 'def'
    import ast, copy
    args = copy.deepcopy(node.args)
    if kind == 'class' and args.args: args.args = args.args[1:]            # no `self`
    params, ret = ast.unparse(args), f'->{ast.unparse(node.returns)}' if node.returns and kind == 'def' else ''
    line = f'{kind} {name}({params}){ret}:'
    return line if len(line) <= 100 else f'{kind} {name}(\n    {params}\n){ret}:'


def static_entry(module: str, name: str) -> str:
    """A `show_doc` entry written from the module's source, for the notebooks whose `show_doc` cells are not run
    (`skip_showdoc`: they need an optional extra, `serve`, that the docs extra does not bring): the signature, the
    docstring's first line, and for a class whose fields are written in its body, the table of its fields."""
    import ast
    path = ROOT / (module.replace('.', '/') + '.py')
    if not path.exists(): return ''
    src = path.read_text(encoding='utf-8')
    node = next((n for n in ast.parse(src).body if getattr(n, 'name', None) == name), None)
    if node is None: return ''
    url = f'{REPO_URL}/blob/main/{path.relative_to(ROOT).as_posix()}#L{node.lineno}'
    parts = [f'---\n\n[source]({url}){{target="_blank" style="float:right; font-size:smaller"}}', f'### {name}']
    fields = [n for n in node.body if isinstance(n, ast.AnnAssign)] if isinstance(node, ast.ClassDef) else []
    has_init = any(getattr(n, 'name', '') == '__init__' for n in getattr(node, 'body', []))
    if fields and not has_init:
        cls_src = ast.get_source_segment(src, node)
        rows = ['| field | type | default | what it is |', '|---|---|---|---|']
        for kind, default, note, field in _notes_in(cls_src):
            rows.append(f'| `{field}` | `{_cell(kind)}` | `{_cell(default)}` | {_cell(note)} |')
        parts.append('\n'.join(rows))
    else: parts.append(_fence(_signature(name, node), 'python'))
    if doc := ast.get_docstring(node): parts.append(f'*{doc.strip().splitlines()[0]}*')
    return '\n\n'.join(parts)


class Page:
    "One processed notebook turned into a Markdown page; figures are written next to it as files."
    def __init__(self, rel: Path, nb: dict, docs: Path, links: dict[str, str]):
        self.rel, self.nb, self.docs, self.links = rel, nb, docs, links
        self.md = page_path(rel, nb)
        self.assets = Path('assets') / self.md.with_suffix('').as_posix().replace('/', '_')
        self.n_images = 0
        self.module = 'dataenvgym.' + self.md.with_suffix('').name       # nbdev names a module's page after it

    def _link(self, target: str) -> str:
        "A docs link, relative to this page (`teaching.envs.md#dataspec`), so mkdocs checks and converts it."
        up = '../' * len(self.md.parent.parts)
        return up + target

    def _local(self, md: str) -> str:
        "Markdown with links to the published docs made local, and the Colab badge drawn locally."
        md = md.replace(COLAB_BADGE_URL, self._link('assets/colab-badge.svg'))
        def sub(m):
            page, anchor = m.group(1), m.group(2) or ''
            return self._link(self.links.get(page, page)) + anchor
        md = re.sub(re.escape(DOCS_URL) + r'([\w./-]+\.html)(#[\w.-]*)?', sub, md)
        def notebook(m):                                 # a link to another notebook, relative to this one
            target = os.path.normpath((self.rel.parent / m.group(1)).as_posix())
            return f']({self._link(self.links[target])}{m.group(2) or ""})' if target in self.links else m.group(0)
        return re.sub(r'\]\(([\w./-]+\.ipynb)(#[\w.-]*)?\)', notebook, md)

    def _api(self, md: str) -> str:
        "A `show_doc` entry's heading with the anchor Quarto gives it (`LLM.ask` → `#llm.ask`), which nbdev's links use."
        return re.sub(r'^(#{2,4}) ([\w.]+)\s*$', lambda m: f'{m.group(1)} {m.group(2)} {{#{m.group(2).lower()}}}', md, flags=re.M)

    def _image(self, data, ext: str) -> str:
        import base64
        path = self.docs / self.assets / f'{self.n_images}.{ext}'
        self.n_images += 1
        path.parent.mkdir(parents=True, exist_ok=True)
        if ext == 'svg': path.write_text(_text(data), encoding='utf-8')
        else: path.write_bytes(base64.b64decode(_text(data)))
        return f'![]({self._link(path.relative_to(self.docs).as_posix())})'

    def _output(self, o: dict) -> str:
        kind = o.get('output_type')
        if kind == 'stream': return _fence(_cut(_text(o['text'])))
        if kind == 'error': return _fence(_cut(re.sub(r'\x1b\[[0-9;]*m', '', '\n'.join(o.get('traceback', [])))))
        data = o.get('data', {})
        for mime, ext in IMAGES.items():
            if mime in data: return self._image(data[mime], ext)
        if 'text/markdown' in data: return self._api(self._local(pydantic_fields(_text(data['text/markdown']))))
        if 'text/html' in data:
            html = re.sub(r'<script\b.*?</script>', '', _text(data['text/html']), flags=re.S)
            html = '\n'.join(l for l in html.splitlines() if l.strip())
            if len(html) < 60_000: return f'<div class="output-html" markdown="0">\n{html}\n</div>'
        if 'text/plain' in data: return _fence(_cut(_text(data['text/plain'])))
        return ''

    def _code(self, c: dict) -> list[str]:
        lines = _text(c['source']).splitlines()
        flags = {m.group(1): m.group(2).strip() for l in lines if (m := DIRECTIVE.match(l))}
        if 'hide' in flags or flags.get('include') == 'false': return []
        src = '\n'.join(l for l in lines if not DIRECTIVE.match(l)).strip()
        parts = [] if flags.get('echo') == 'false' or 'hide_input' in flags or not src else [_fence(src, 'python')]
        if flags.get('output') != 'false' and 'hide_output' not in flags:
            parts += [s for o in c.get('outputs', []) if (s := self._output(o))]
        if not c.get('outputs') and (m := SHOW_DOC.match(src)) and (entry := static_entry(self.module, m.group(1))):
            parts.append(self._api(self._local(entry)))
        return parts

    def markdown(self) -> str:
        "The page: the notebook's title and one-line summary, then every cell in order."
        fm = front_matter(self.nb)
        parts = [f'# {fm.get("title", self.md.stem)}'] + ([f'> {fm["description"]}'] if fm.get('description') else [])
        for c in self.nb['cells'][1 if fm else 0:]:
            if c['cell_type'] == 'markdown': parts.append(self._local(_text(c['source'])))
            elif c['cell_type'] == 'code': parts += self._code(c)
        return '\n\n'.join(p.strip('\n') for p in parts) + '\n'


def sidebar(proc: Path) -> list[str]:
    "The notebooks of `nbs/sidebar.yml` (or `_proc/sidebar.yml`), in its order, as paths relative to `nbs/`."
    for f in (NBS / 'sidebar.yml', proc / 'sidebar.yml'):
        if f.exists(): break
    else: return sorted(p.relative_to(proc).as_posix() for p in proc.rglob('*.ipynb'))
    def walk(items):
        for it in items:
            if isinstance(it, str): yield it
            elif isinstance(it, dict): yield from walk(it.get('contents', []))
    return [p for p in walk(yaml.safe_load(f.read_text())['website']['sidebar']['contents']) if p.endswith('.ipynb')]


def _index(links: dict[str, str]) -> str:
    "The README, as the site's front page (its links into the docs and to notebooks made local)."
    md = (ROOT / 'README.md').read_text(encoding='utf-8').replace(DOCS_URL, '')
    def local(m):                               # a notebook (`architecture.ipynb`) or a page (`core.html`): its page
        return f']({links[m.group(1)]}{m.group(2) or ""})' if m.group(1) in links else m.group(0)
    return re.sub(r'\]\(([\w./-]+\.(?:ipynb|html))(#[\w.-]*)?\)', local, md)


def write_markdown(proc: Path, docs: Path) -> list[tuple[str, str]]:
    "Every page as Markdown under `docs`; returns the navigation: (title, page) in sidebar order."
    if docs.exists(): shutil.rmtree(docs)
    (docs / 'assets').mkdir(parents=True)
    (docs / 'assets' / 'colab-badge.svg').write_text(BADGE, encoding='utf-8')
    for folder in ('images',):
        if (NBS / folder).is_dir(): shutil.copytree(NBS / folder, docs / folder)
    nbs = {rel: json.loads((proc / rel).read_text(encoding='utf-8')) for rel in sidebar(proc) if rel != 'index.ipynb'}
    links = {}                                  # nbdev's links (core.html) and notebook links (00_core.ipynb) → pages
    for rel, nb in nbs.items():
        md = page_path(Path(rel), nb).as_posix()
        links[Path(md).with_suffix('.html').as_posix()] = links[rel] = md
    (docs / 'index.md').write_text(_index(links), encoding='utf-8')
    nav = [('Home', 'index.md')]
    for rel, nb in nbs.items():
        page = Page(Path(rel), nb, docs, links)
        (docs / page.md).parent.mkdir(parents=True, exist_ok=True)
        (docs / page.md).write_text(page.markdown(), encoding='utf-8')
        titled = rel.startswith('tutorials/') or page.md.as_posix() in GUIDES
        title = front_matter(nb).get('title', page.md.stem) if titled else page.md.stem
        nav.append((str(title), page.md.as_posix()))
    return nav


HEADING = re.compile(r'^#{1,6} +(.*?)(?: +\{#([\w.-]+)\})? *$')
LINK = re.compile(r'\]\(((?:\.\./)*[\w./-]*\.md)(#[\w.-]+)\)')


def anchors(md: str) -> set[str]:
    "The ids a page's headings get: an explicit `{#id}` (the API entries), else the toc extension's slug."
    from markdown.extensions.toc import slugify
    ids, fenced = set(), False
    for line in md.splitlines():
        if line.startswith('```'): fenced = not fenced
        elif not fenced and (m := HEADING.match(line)): ids.add(m.group(2) or slugify(m.group(1), '-'))
    return ids


def mend_anchors(docs: Path, pages: list[str]) -> int:
    """Point each link to an anchor that no page has at the nearest that exists: `Class.method` without an entry of its
    own at the class's entry, a private helper (no entry) at its page. Returns how many links it mended."""
    ids = {p: anchors((docs / p).read_text(encoding='utf-8')) for p in pages}
    mended = 0
    def mend(page: str, m) -> str:
        nonlocal mended
        target, anchor = m.group(1), m.group(2)[1:]
        at = os.path.normpath(Path(page).parent / target).replace(os.sep, '/')
        if at not in ids or anchor in ids[at]: return m.group(0)
        mended += 1
        owner = anchor.rpartition('.')[0]
        return f']({target}#{owner})' if owner in ids[at] else f']({target})'
    for page in pages:
        path = docs / page
        path.write_text(LINK.sub(lambda m: mend(page, m), path.read_text(encoding='utf-8')), encoding='utf-8')
    return mended


def _nav(nav: list[tuple[str, str]]) -> list:
    "MkDocs navigation: the front page and the glossary, each folder (tutorials) as a section, the API reference."
    top, sections = [], {}
    for title, page in nav:
        folder = page.rpartition('/')[0]
        if folder: sections.setdefault(folder.capitalize(), []).append({title: page})
        else: top.append({title: page})
    guides = [p for p in top[1:] if list(p.values())[0] in GUIDES]          # the glossary: beside Home, not in the API
    api = [p for p in top[1:] if p not in guides]
    return top[:1] + guides + [{name: pages} for name, pages in sections.items()] + [{'API reference': api}]


def render(out: Path = ROOT / '_docs', force: bool = False) -> list[Path]:
    "Build the site into `out`; returns its pages (HTML files), the front page first."
    proc = processed(force)
    nav = write_markdown(proc, BUILD / 'docs')
    mend_anchors(BUILD / 'docs', [page for _, page in nav])
    cfg = yaml.safe_load((ROOT / 'tools' / 'mkdocs.yml').read_text())
    cfg.update(docs_dir='docs', site_dir=str(out.resolve()), nav=_nav(nav))
    (BUILD / 'mkdocs.yml').write_text(yaml.safe_dump(cfg, sort_keys=False))
    r = subprocess.run([sys.executable, '-m', 'mkdocs', 'build', '--clean', '-q', '-f', str(BUILD / 'mkdocs.yml')],
                       capture_output=True, text=True)
    if r.returncode: raise RuntimeError(f'mkdocs build failed:\n{r.stderr[-3000:]}')
    return [out / Path(page).with_suffix('.html') for _, page in nav]


if __name__ == '__main__':
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / '_docs'
    pages = render(out)
    size = sum(p.stat().st_size for p in pages)
    print(f'built {len(pages)} pages into {out} ({size / len(pages) / 1024:.0f} KB of HTML a page on average)')

"""Render README.md from nbs/index.ipynb (Quarto cannot be installed here, so nbconvert does the rendering).

Usage: python tools/render_readme.py [--check]   (--check exits 1 if README.md is out of date)
"""
import re, sys
from pathlib import Path

import nbformat
from nbconvert import MarkdownExporter

ROOT = Path(__file__).resolve().parents[1]
DIRECTIVE = re.compile(r'^\s*#\|\s*(\S+)')


def _directives(cell) -> set[str]:
    return {m.group(1) for line in cell.source.splitlines() if (m := DIRECTIVE.match(line))}


def _strip_directives(src: str) -> str:
    return '\n'.join(l for l in src.splitlines() if not DIRECTIVE.match(l)).strip('\n')


def render(nb_path: Path = ROOT / 'nbs' / 'index.ipynb') -> str:
    "The README text for `nb_path`: hidden cells dropped, nbdev directives removed."
    nb = nbformat.read(nb_path, as_version=4)
    nb.cells = [c for c in nb.cells if not {'hide', 'export', 'exporti'} & _directives(c)]
    for c in nb.cells:
        if c.cell_type == 'code': c.source = _strip_directives(c.source)
    body, _ = MarkdownExporter().from_notebook_node(nb)
    return re.sub(r'\n{3,}', '\n\n', body).strip() + '\n'


def main(argv: list[str]) -> int:
    text, readme = render(), ROOT / 'README.md'
    if '--check' in argv:
        if not readme.exists() or readme.read_text() != text:
            print('README.md is out of date: run python tools/render_readme.py')
            return 1
        return 0
    readme.write_text(text)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

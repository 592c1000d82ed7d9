"""Render every notebook to a static HTML site in `_docs/` (Quarto, which `nbdev-docs` needs, cannot be installed here).

The notebooks' committed outputs are the docs, so nothing is executed. Hidden cells and nbdev directives are dropped,
as nbdev's own renderer does. Pages load nothing from the network: no MathJax, require.js or widget scripts from a CDN
(widget outputs show their static picture, which every explorer in `viz` provides).

Usage: python tools/render_docs.py [OUT]     (default OUT: _docs)
"""
import base64, html, re, shutil, sys
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
DIRECTIVE = re.compile(r'^\s*#\|\s*(\S+)')
OFFLINE = dict(mathjax_url='', require_js_url='', jquery_url='', widget_renderer_url='', jupyter_widgets_base_url='',
               mermaid_js_url='')

# the "Open in Colab" badge, drawn locally so the page loads nothing from the network (the link itself stays)
_BADGE = ('<svg xmlns="http://www.w3.org/2000/svg" width="117" height="20"><rect width="117" height="20" rx="3" fill="#555"/>'
          '<rect x="50" width="67" height="20" rx="3" fill="#f9ab00"/><g fill="#fff" font-family="Verdana,sans-serif" font-size="11">'
          '<text x="7" y="14">Open in</text><text x="58" y="14">Colab</text></g></svg>')
COLAB_BADGE = 'data:image/svg+xml;base64,' + base64.b64encode(_BADGE.encode()).decode()


def notebooks() -> list[Path]:
    "Every notebook of the docs, tutorials included, in order."
    return sorted(p for p in NBS.rglob('*.ipynb') if '.ipynb_checkpoints' not in p.parts and not p.name.startswith('_'))


def _prepare(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    "Drop hidden cells and nbdev directive lines; keep only outputs a static page can show."
    keep = []
    for c in nb.cells:
        flags = {m.group(1) for line in c.source.splitlines() if (m := DIRECTIVE.match(line))}
        if {'hide', 'exporti'} & flags: continue
        if c.cell_type == 'code':
            c.source = '\n'.join(l for l in c.source.splitlines() if not DIRECTIVE.match(l))
            for o in c.get('outputs', []):
                if 'data' in o: o['data'].pop('application/vnd.jupyter.widget-view+json', None)
        keep.append(c)
    nb.cells = keep
    nb.metadata.pop('widgets', None)
    return nb


def render(out: Path = ROOT / '_docs') -> list[Path]:
    "Write one HTML page per notebook under `out` (mirroring `nbs/`) and an index page; returns the pages."
    exporter = HTMLExporter(template_name='lab', **OFFLINE)
    pages = []
    for nb_path in notebooks():
        body, _ = exporter.from_notebook_node(_prepare(nbformat.read(nb_path, as_version=4)))
        body = re.sub(r'<script[^>]+src="https?://[^"]*"[^>]*>\s*</script>', '', body)   # nothing from the network
        body = body.replace('<head>', '<head><link rel="icon" href="data:,">', 1)            # no favicon request either
        body = body.replace('https://colab.research.google.com/assets/colab-badge.svg', COLAB_BADGE)
        page = out / nb_path.relative_to(NBS).with_suffix('.html')
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(body, encoding='utf-8')
        pages.append(page)
    if (NBS / 'images').is_dir(): shutil.copytree(NBS / 'images', out / 'images', dirs_exist_ok=True)   # figures the markdown links
    links = '\n'.join(f'<li><a href="{p.relative_to(out).as_posix()}">{html.escape(p.relative_to(out).with_suffix("").as_posix())}</a></li>'
                      for p in pages)
    (out / 'index.html').write_text(f'<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>dataenvgym docs</title></head>'
                                    f'<body><h1>dataenvgym</h1><ul>{links}</ul></body></html>', encoding='utf-8')
    return pages


if __name__ == '__main__':
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / '_docs'
    pages = render(out)
    print(f'rendered {len(pages)} pages into {out}')

"""The notebooks read like fastcore: short exported cells, short lines (measured over `nbs/`).

An exported cell is a code cell marked `#| export` or `#| exports`; its length is its lines less the directives.
A long line is a code line over 110 characters (lines holding a URL aside). `tools/restyle_nbs.py` brings a
notebook back within these bounds without changing its code."""
import json, re
from pathlib import Path

ROOT = Path(__file__).parents[1]
WIDTH, MEAN_CELL, MAX_CELL, LONG_SHARE = 110, 15, 60, 0.02
DIRECTIVE = re.compile(r'^\s*#\|')


def code_cells() -> list[tuple[Path, list[str]]]:
    "Every code cell of the notebooks, as (notebook, its lines)."
    return [(p, ''.join(c['source']).splitlines()) for p in sorted((ROOT / 'nbs').rglob('*.ipynb'))
            for c in json.loads(p.read_text())['cells'] if c['cell_type'] == 'code']


def exported_lengths() -> list[tuple[int, str]]:
    "Each exported cell's length in lines (directives not counted), with where it is."
    out = []
    for p, lines in code_cells():
        if any(re.match(r'\s*#\|\s*exports?\b', l) for l in lines):
            body = [l for l in lines if not DIRECTIVE.match(l)]
            out.append((len(body), f'{p.name}: {body[0][:60] if body else ""}'))
    return out


def test_exported_cells_are_short():
    "Exported cells: at most 15 lines on average and 60 at most."
    lengths = exported_lengths()
    mean = sum(n for n, _ in lengths) / len(lengths)
    assert mean <= MEAN_CELL, f'exported cells average {mean:.1f} lines (at most {MEAN_CELL})'
    long = sorted(x for x in lengths if x[0] > MAX_CELL)
    assert not long, f'exported cells over {MAX_CELL} lines: {long}'


def test_lines_are_short():
    "At most 2% of the notebooks' code lines are over 110 characters (lines with a URL aside)."
    lines = [l for _, ls in code_cells() for l in ls if 'http://' not in l and 'https://' not in l]
    long = [l for l in lines if len(l) > WIDTH]
    assert len(long) <= LONG_SHARE * len(lines), \
        f'{len(long)} of {len(lines)} code lines are over {WIDTH} characters (at most {LONG_SHARE:.0%}); ' \
        'run python tools/restyle_nbs.py'

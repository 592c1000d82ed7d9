"""Run every notebook through nbdev's test API (slow cells skipped), one pytest test per notebook.

A tutorial is run on a copy whose outputs nbdev saves, and each cell's saved outputs must be of the same kinds as the
fresh run's (a figure where a figure was, a table where a table was): a tutorial whose stored outputs went stale in
kind fails here. Cells nbdev skips (`#| slow`, `#| eval: false`) keep their stored outputs and are not compared."""
import shutil, uuid
from pathlib import Path

import nbformat
import pytest
from nbdev.test import test_nb as run_notebook  # aliased so pytest does not collect it as a test

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
NOTEBOOKS = sorted(p for p in NBS.rglob('*.ipynb')
                   if not any(part.startswith(('_', '.')) for part in p.relative_to(NBS).parts))
# kinds that say nothing of what a cell shows (every result has a text form; widgets need a live front end)
_IGNORED = {'text/plain', 'application/vnd.jupyter.widget-view+json', 'application/vnd.jupyter.widget-state+json'}


def test_notebooks_found():
    assert len(NOTEBOOKS) >= 3, NOTEBOOKS


def output_kinds(cell) -> set[str]:
    "The kinds of output a code cell shows: the MIME types of its results and displays, and `error` if it raised."
    kinds = set()
    for o in cell.get('outputs', []):
        if o['output_type'] in ('execute_result', 'display_data'): kinds |= set(o.get('data', {})) - _IGNORED
        elif o['output_type'] == 'error': kinds.add('error')
    return kinds


def stale_cells(saved, fresh) -> list[str]:
    "Cells (by id) whose saved output kinds differ from the fresh run's."
    fresh_by_id = {c.get('id'): c for c in fresh.cells if c.cell_type == 'code'}
    return [f'{c.get("id")}: saved {sorted(output_kinds(c))}, fresh {sorted(output_kinds(fresh_by_id[c.get("id")]))}'
            for c in saved.cells if c.cell_type == 'code' and c.get('id') in fresh_by_id
            and output_kinds(c) != output_kinds(fresh_by_id[c.get('id')])]


def test_output_kinds_compare_figures_tables_and_errors():
    cell = lambda *outs: nbformat.v4.new_code_cell(outputs=list(outs))
    fig = nbformat.v4.new_output('display_data', data={'image/png': 'x', 'text/plain': '<Figure>'})
    text = nbformat.v4.new_output('execute_result', data={'text/plain': '1'}, execution_count=1)
    assert output_kinds(cell(fig, text)) == {'image/png'} and output_kinds(cell(text)) == set()
    saved, fresh = nbformat.v4.new_notebook(cells=[cell(text)]), nbformat.v4.new_notebook(cells=[cell(fig)])
    fresh.cells[0]['id'] = saved.cells[0]['id']
    assert stale_cells(saved, fresh) and not stale_cells(saved, saved)


@pytest.mark.parametrize('nb', NOTEBOOKS, ids=[str(p.relative_to(NBS)) for p in NOTEBOOKS])
def test_notebook(nb):
    if nb.parent.name != 'tutorials':
        ok, secs = run_notebook(nb, skip_flags=['slow'], basepath=ROOT)
        assert ok, f'{nb.name} failed (see the traceback above)'
        return
    copy = nb.with_name(f'.fresh-{uuid.uuid4().hex[:8]}-{nb.name}')    # beside it: the same relative paths
    shutil.copy(nb, copy)
    try:
        ok, secs = run_notebook(copy, skip_flags=['slow'], basepath=ROOT, save=True)
        assert ok, f'{nb.name} failed (see the traceback above)'
        stale = stale_cells(nbformat.read(nb, as_version=4), nbformat.read(copy, as_version=4))
        assert not stale, f'{nb.name}: saved outputs differ in kind from a fresh run; re-run it:\n' + '\n'.join(stale)
    finally: copy.unlink(missing_ok=True)

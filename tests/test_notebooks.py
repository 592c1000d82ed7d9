"""Run every notebook through nbdev's test API (slow cells skipped), one pytest test per notebook."""
from pathlib import Path

import pytest
from nbdev.test import test_nb as run_notebook  # aliased so pytest does not collect it as a test

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
NOTEBOOKS = sorted(p for p in NBS.rglob('*.ipynb')
                   if not any(part.startswith(('_', '.')) for part in p.relative_to(NBS).parts))


def test_notebooks_found():
    assert len(NOTEBOOKS) >= 3, NOTEBOOKS


@pytest.mark.parametrize('nb', NOTEBOOKS, ids=[str(p.relative_to(NBS)) for p in NOTEBOOKS])
def test_notebook(nb):
    ok, secs = run_notebook(nb, skip_flags=['slow'], basepath=ROOT)
    assert ok, f'{nb.name} failed (see the traceback above)'

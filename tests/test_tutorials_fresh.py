"""Every tutorial, top to bottom, on a fresh kernel in a fresh venv whose only setup is the tutorial's own install cell.

The venv gets a Jupyter kernel and nothing else; the first cell of each tutorial (the one that installs dataenvgym on
Colab from the repository) is pointed at this checkout by `DATAENVGYM_SOURCE=file://...`, and installs it there with
the extra that tutorial names. Tutorials run in a copy of `nbs/`, so nothing is written into the checkout. Cells
marked `#| eval: false` (06 and 07: a Qwen model from the Hub on a T4) are left out, as `nbdev-test` leaves them out;
everything else runs, and 07 starts from what 06 saved, so run them in order.

Slow (the install, then minutes a tutorial on a CPU), so it runs only when asked:

    DATAENVGYM_FRESH_TUTORIALS=1 python -m pytest -n0 tests/test_tutorials_fresh.py     # all; or -k 01_first_episode
"""
import os, re, shutil, subprocess, sys, venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / 'nbs' / 'tutorials').glob('*.ipynb'))
EVAL_FALSE = re.compile(r'^\s*#\|\s*eval:\s*false', re.M)
pytestmark = pytest.mark.skipif(not os.environ.get('DATAENVGYM_FRESH_TUTORIALS'),
                                reason='slow: set DATAENVGYM_FRESH_TUTORIALS=1 to run the tutorials in a fresh venv')


@pytest.fixture(scope='module')
def fresh(tmp_path_factory):
    "A fresh venv with only a Jupyter kernel in it, registered under a Jupyter path of its own, and a copy of `nbs/`."
    tmp = tmp_path_factory.mktemp('fresh')
    venv.create(tmp / 'venv', with_pip=True)
    py = tmp / 'venv' / 'bin' / 'python'
    subprocess.run([py, '-m', 'pip', 'install', '-q', 'ipykernel'], check=True)
    subprocess.run([py, '-m', 'ipykernel', 'install', '--prefix', tmp / 'jupyter', '--name', 'fresh'], check=True,
                   capture_output=True)
    shutil.copytree(ROOT / 'nbs', tmp / 'nbs', ignore=shutil.ignore_patterns('.ipynb_checkpoints'))
    return tmp, py


@pytest.mark.parametrize('tutorial', TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs_with_only_its_install_cell(fresh, tutorial, monkeypatch):
    import nbformat
    from nbclient import NotebookClient
    tmp, py = fresh
    monkeypatch.setenv('JUPYTER_PATH', str(tmp / 'jupyter' / 'share' / 'jupyter'))
    monkeypatch.setenv('DATAENVGYM_SOURCE', ROOT.as_uri())
    monkeypatch.setenv('OMP_NUM_THREADS', '1')
    for var in ('PYTHONPATH', 'VIRTUAL_ENV'): monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv('PATH', f'{py.parent}{os.pathsep}{os.environ["PATH"]}')
    copy = tmp / 'nbs' / 'tutorials' / tutorial.name
    nb = nbformat.read(copy, as_version=4)
    nb.cells = [c for c in nb.cells if not EVAL_FALSE.search(c.source)]   # the T4/Hub cells, as nbdev-test skips them
    NotebookClient(nb, kernel_name='fresh', timeout=3600, resources={'metadata': {'path': str(copy.parent)}}).execute()
    out = subprocess.run([py, '-c', 'import dataenvgym; print(dataenvgym.__file__)'], capture_output=True, text=True, cwd=tmp)
    assert 'venv' in out.stdout, out                   # the package came from the venv's own install, not the checkout

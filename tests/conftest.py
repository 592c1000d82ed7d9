import os

import pytest

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('HF_DATASETS_OFFLINE', '1')
os.environ.setdefault('MPLBACKEND', 'Agg')

if os.environ.get('PYTEST_XDIST_WORKER'):      # pytest-xdist runs a worker per core: one thread each, or they fight over the cores
    os.environ.setdefault('OMP_NUM_THREADS', '1')
    import torch
    torch.set_num_threads(1)


# The longest tests (whole notebooks, the golden replay, the Ray cluster, the CLI's runs) go first, so that the two
# workers end together instead of one running a 3-minute notebook alone at the end.
LONGEST_FIRST = ('test_notebooks.py', 'test_golden.py', 'test_sweep.py', 'test_cli.py')


# The system packages some tests need, as the README lists them: the one command that installs them all (Debian/Ubuntu).
# A test that needs one skips, with this command in its reason, where it is absent.
APT_INSTALL = 'sudo apt-get install -y bubblewrap chromium chromium-driver'


def pytest_configure(config):
    config.addinivalue_line('markers', f'bubblewrap: runs untrusted code in the bubblewrap box ({APT_INSTALL})')


def _no_box() -> str:
    "Why untrusted code cannot be boxed on this machine ('' where it can, or where the weaker sandbox was opted in to)."
    from dataenvgym import sandbox
    if os.environ.get(sandbox._SANDBOX_ENV) == 'best-effort': return ''
    return sandbox._isolation()[1]


def pytest_collection_modifyitems(items):
    def rank(item):
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)
    items.sort(key=rank)   # stable: each file keeps its order
    boxed = [i for i in items if i.get_closest_marker('bubblewrap')]
    if boxed and (why := _no_box()):
        for i in boxed: i.add_marker(pytest.mark.skip(reason=f'needs bubblewrap ({why}): {APT_INSTALL}'))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test not marked `bubblewrap` that failed for want of the box (`sandbox.refusal`'s words) is skipped, saying how to get
    it; only where this machine really cannot build the box (where it can, that failure is a real one and stays one)."""
    report = (yield).get_result()
    if (report.failed and call.excinfo is not None and 'cannot isolate untrusted code' in str(report.longrepr)
            and _no_box()):
        report.outcome, report.longrepr = 'skipped', (str(item.path), item.location[1] or 0,
                                                      f'Skipped: needs bubblewrap: {APT_INSTALL}')

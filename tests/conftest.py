import os
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


def pytest_collection_modifyitems(items):
    def rank(item):
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)
    items.sort(key=rank)   # stable: each file keeps its order

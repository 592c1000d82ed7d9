import os
os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('HF_DATASETS_OFFLINE', '1')
os.environ.setdefault('MPLBACKEND', 'Agg')

if os.environ.get('PYTEST_XDIST_WORKER'):      # pytest-xdist runs a worker per core: one thread each, or they fight over the cores
    os.environ.setdefault('OMP_NUM_THREADS', '1')
    import torch
    torch.set_num_threads(1)

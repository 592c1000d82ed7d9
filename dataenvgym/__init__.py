__version__ = "0.0.1"

from .gyms import _register_lazily as _register_gym_ids
_register_gym_ids()            # gymnasium ids `dataenvgym/...`, registered when gymnasium is imported (never imported here)

# The names a user needs first, each imported from its module on first use (PEP 562), so that `import dataenvgym`
# stays light (no torch) and `from dataenvgym import make, run_episode` works.
_PUBLIC = {'make': 'registry', 'register': 'registry', 'registered': 'registry', 'lookup': 'registry',
           'check_domain': 'core', 'check_student': 'core', 'run_episode': 'teaching.runner',
           'run_sweep': 'teaching.sweep', 'load_config': 'teaching.config', 'RepairEnv': 'repair.env',
           'TRAIN_CONFIGS': 'repair.train', 'precision': 'lm'}
__all__ = list(_PUBLIC)


def __getattr__(name: str):
    if name not in _PUBLIC: raise AttributeError(f"module 'dataenvgym' has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(f'dataenvgym.{_PUBLIC[name]}'), name)


def __dir__() -> list[str]: return sorted([*globals(), *_PUBLIC])

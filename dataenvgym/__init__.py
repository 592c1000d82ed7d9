__version__ = "0.0.1"

from .gyms import register_lazily as _register_gym_ids
_register_gym_ids()            # gymnasium ids `dataenvgym/...`, registered when gymnasium is imported (never imported here)

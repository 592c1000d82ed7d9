"""The package's public face: the dozen names a user needs first come from `dataenvgym` itself, lazily, and the
package's `__all__` lists stay small (internal helpers are underscored)."""
import re, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_first_names_import_from_the_package():
    import dataenvgym
    from dataenvgym import make, run_episode  # noqa: F401  (the README's first import)
    for name in dataenvgym.__all__:
        obj = getattr(dataenvgym, name)
        assert getattr(obj, '__name__', name) == name or not callable(obj), name
    assert set(dataenvgym.__all__) <= set(dir(dataenvgym))


def test_importing_the_package_loads_no_torch():
    code = 'import sys, dataenvgym; print("torch" in sys.modules)'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == 'False'


def test_an_unknown_name_is_an_attribute_error():
    import dataenvgym, pytest
    with pytest.raises(AttributeError, match='no attribute'): dataenvgym.nothing_here

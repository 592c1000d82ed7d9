"""The extras a user installs resolve with the package's own requirements: pip's dry run of the built wheel with the
extra, for each Python the package supports, so that the next library release that breaks one fails here, not in a
user's Colab runtime. Needs the package index (CI reaches it; without it the test skips)."""
import json, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Linux x86-64 up to glibc 2.35, Colab's (Ubuntu 22.04): pip matches each manylinux tag exactly
PLATFORM = [x for n in (35, 34, 31, 28, 27, 24, 17) for x in ('--platform', f'manylinux_2_{n}_x86_64')] + \
    ['--platform', 'manylinux2014_x86_64', '--platform', 'linux_x86_64']


@pytest.fixture(scope='module')
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp('wheel')
    r = subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '-q', '-w', str(out),
                        str(ROOT)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return next(out.glob('dataenvgym-*.whl'))


def dry_run(requirement: str, python: str, target: Path) -> subprocess.CompletedProcess:
    "pip's resolution of `requirement` for CPython `python` on Linux x86-64, installing nothing."
    return subprocess.run([sys.executable, '-m', 'pip', 'install', '--dry-run', '--ignore-installed', '--quiet',
                           '--report', '-', '--only-binary=:all:', '--python-version', python,
                           '--implementation', 'cp', *PLATFORM, '--target', str(target), requirement],
                          capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize('python', ['3.11', '3.12'])
def test_the_gpu_extra_resolves(wheel, python, tmp_path):
    r = dry_run(f'dataenvgym[gpu] @ {wheel.as_uri()}', python, tmp_path)
    if r.returncode and ('Could not fetch' in r.stderr or 'NewConnectionError' in r.stderr):
        pytest.skip('no package index reachable')
    assert r.returncode == 0, r.stderr[-3000:]
    chosen = {i['metadata']['name'].lower(): i['metadata']['version'] for i in json.loads(r.stdout)['install']}
    assert {'bitsandbytes', 'trl', 'transformers', 'peft', 'torch'} <= set(chosen), sorted(chosen)
    assert 'unsloth' not in chosen              # its TRL cap cannot co-install: not in the extra (see `lm`)

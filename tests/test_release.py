"""Release checks: the repository URL is one setting; the wheel and the sdist that `python -m build` makes install into
a fresh venv and run the README's main job from there; the Docker image builds and runs it.

The build and install tests are slow (a build, a venv, a one-minute episode): they run with DATAENVGYM_SLOW=1. The
fresh venv gets the package only from the wheel (or sdist) and runs outside the checkout, so a file missing from the
package shows; its dependencies come from this environment's site-packages (a `.pth` line, no network), so the test
needs no download. The Docker test needs a running Docker daemon (and the network, for the base image and PyTorch)."""
import os, shutil, subprocess, sys, sysconfig, venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAIN_JOB = ['teach', '--env', 'skill-tree', '--domain', 'math', '--seed', '0']
CLEAN = {**{k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}, 'OMP_NUM_THREADS': '1'}   # no checkout on the path
slow = pytest.mark.skipif(not os.environ.get('DATAENVGYM_SLOW'), reason='builds and installs the package (minutes): DATAENVGYM_SLOW=1')


def _docker_missing() -> str:
    "Why Docker cannot be used here ('' where it can)."
    if not shutil.which('docker'): return 'docker is not installed'
    r = subprocess.run(['docker', 'info'], capture_output=True, text=True, timeout=60)
    return '' if r.returncode == 0 else 'the docker daemon is not running (docker info failed)'


def test_repository_url_is_one_setting():
    "Every badge, Colab install cell, nbdev.yml and CITATION.cff says the URL that pyproject.toml sets."
    r = subprocess.run([sys.executable, str(ROOT / 'tools' / 'repo_url.py'), '--check'], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.fixture(scope='module')
def dist(tmp_path_factory) -> Path:
    "The sdist and the wheel, built from a copy of the checkout (`python -m build`: the wheel is built from the sdist)."
    out = tmp_path_factory.mktemp('dist')
    r = subprocess.run([sys.executable, '-m', 'build', '--no-isolation', '--outdir', str(out), str(ROOT)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return out


def fresh_venv(where: Path) -> Path:
    "A new venv whose dependencies resolve to this environment's (a `.pth` line) and that holds no dataenvgym."
    venv.create(where, with_pip=False)
    py = where / 'bin' / 'python'
    site = subprocess.run([str(py), '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, 'deps.pth').write_text(sysconfig.get_paths()['purelib'] + '\n')
    r = subprocess.run([str(py), '-c', 'import dataenvgym'], capture_output=True, text=True, cwd=where, env=CLEAN)
    assert r.returncode != 0, 'the fresh venv already sees a dataenvgym'
    return py


def install_and_run(py: Path, artifact: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    "Install `artifact` (no dependencies: they are there) into the venv of `py`, then run `dataenvgym ARGS` from it."
    # --ignore-installed: the dependencies' folder holds the checkout's editable dist-info; pip must not take it for this
    r = subprocess.run([str(py), '-m', 'pip', 'install', '--no-deps', '--no-build-isolation', '--ignore-installed', str(artifact)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return subprocess.run([str(py.parent / 'dataenvgym'), *args], capture_output=True, text=True, timeout=1800, cwd=cwd, env=CLEAN)


@slow
def test_the_wheel_installs_and_runs_the_main_job(dist, tmp_path):
    (wheel,) = dist.glob('dataenvgym-*.whl')
    py = fresh_venv(tmp_path / 'venv')
    r = install_and_run(py, wheel, [*MAIN_JOB, '--out', str(tmp_path / 'run')], cwd=tmp_path)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert 'Test accuracy at the start' in r.stdout and (tmp_path / 'run' / 'summary.md').exists()
    where = subprocess.run([str(py), '-c', 'import dataenvgym; print(dataenvgym.__file__)'], capture_output=True, text=True, cwd=tmp_path,
                           env=CLEAN)
    assert str(tmp_path / 'venv') in where.stdout, where.stdout      # the installed copy ran, not the checkout


@slow
def test_the_sdist_installs_and_runs(dist, tmp_path):
    (sdist,) = dist.glob('dataenvgym-*.tar.gz')
    py = fresh_venv(tmp_path / 'venv')
    r = install_and_run(py, sdist, ['teach', '--env', 'skill-tree', '--preset', 'tiny', '--out', str(tmp_path / 'run')], cwd=tmp_path)
    assert r.returncode == 0 and 'Test accuracy at the start' in r.stdout, (r.stdout + r.stderr)[-3000:]


def test_the_docker_image_builds_and_runs_the_main_job(tmp_path):
    if why := _docker_missing(): pytest.skip(f'needs Docker: {why}')
    tag = 'dataenvgym-release-test'
    r = subprocess.run(['docker', 'build', '-t', tag, str(ROOT)], capture_output=True, text=True, timeout=3600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    r = subprocess.run(['docker', 'run', '--rm', tag, 'dataenvgym', *MAIN_JOB], capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0 and 'Test accuracy at the start' in r.stdout, (r.stdout + r.stderr)[-3000:]

"""The sweep (dataenvgym.teaching.sweep): the same numbers sequentially and on Ray (one local runtime, and a two-node
cluster on this machine), and a sweep killed midway that, rerun, runs only the episodes it had not finished."""
import json, os, re, secrets, signal, socket, subprocess, sys, tempfile, time
from pathlib import Path
from types import SimpleNamespace

import pytest

from dataenvgym.teaching.sweep import _LOCAL_RAY, _make_spec, run_sweep

SPEC = dict(presets=['math/tiny'], envs=['skill-list'], policies=['with-state', 'no-state'], seeds='0-1', iterations=1)
VOLATILE = ('ran', 'seconds', 'node')


def numbers(result) -> list[dict]:
    "A sweep's rows without what may differ between two runs of the same grid (timings, where it ran)."
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in result.rows]


def ray_env() -> dict:
    "The environment for a Ray subprocess: one torch thread, no dashboard, no usage reporting."
    return {**os.environ, **_LOCAL_RAY, 'OMP_NUM_THREADS': '1'}


def sweep_in_subprocess(out: Path, *args: str, env: dict | None = None, timeout: int = 900, before: str = '',
                        stderr: list | None = None) -> dict:
    """Run the sweep of SPEC in a fresh interpreter (as a user's script would), after the code `before`; its result
    as JSON (and its stderr appended to `stderr`)."""
    code = (f'{before}\nimport json, sys; from dataenvgym.teaching.sweep import _LOCAL_RAY, _make_spec, run_sweep; '
            f'r = run_sweep(_make_spec(**{SPEC!r}), sys.argv[1], progress=False, **json.loads(sys.argv[2])); '
            'print(r.model_dump_json())')
    kw = dict(zip(args[::2], args[1::2]))
    p = subprocess.run([sys.executable, '-c', code, str(out), json.dumps(kw)], capture_output=True, text=True, timeout=timeout,
                       env=env or ray_env())
    assert p.returncode == 0, p.stderr[-3000:]
    if stderr is not None: stderr.append(p.stderr)
    # the last JSON line: a raylet started again can forward its log lines to the driver's stdout after the result
    return json.loads(next(l for l in reversed(p.stdout.strip().splitlines()) if l.startswith('{')))


@pytest.fixture(scope='module')
def sequential(tmp_path_factory):
    out = tmp_path_factory.mktemp('sequential')
    return run_sweep(_make_spec(**SPEC), out, progress=False)


def test_ray_gives_the_sequential_numbers(sequential, tmp_path):
    pytest.importorskip('ray')
    res = sweep_in_subprocess(tmp_path / 'ray', 'backend', 'ray')
    assert res['backend'] == 'ray' and res['ran'] == 4
    assert [{k: v for k, v in r.items() if k not in VOLATILE} for r in res['rows']] == numbers(sequential)
    assert res['pairs'] == json.loads(json.dumps(sequential.pairs))


# In the sweep's interpreter: once the first episode has finished, SIGKILL this process's raylet (as the kernel's
# out-of-memory killer would), while the other episodes run or wait
KILL_THE_RAYLET = """
import signal, sys, threading, time
from pathlib import Path
import psutil
def kill_the_raylet_after_the_first_episode(out):
    while not any(Path(out).glob('**/result.jsonl')): time.sleep(0.1)
    raylets = [p for p in psutil.Process().children(recursive=True) if p.name() == 'raylet']
    for p in raylets: p.send_signal(signal.SIGKILL)
    print(f'killed {len(raylets)} raylet', file=sys.stderr, flush=True)
threading.Thread(target=kill_the_raylet_after_the_first_episode, args=(sys.argv[1],), daemon=True).start()
"""


def test_a_lost_local_ray_runtime_is_started_again(sequential, tmp_path):
    pytest.importorskip('ray')
    err = []
    res = sweep_in_subprocess(tmp_path / 'ray', 'backend', 'ray', before=KILL_THE_RAYLET, stderr=err)
    assert 'killed 1 raylet' in err[0] and 'the local Ray runtime was lost (' in err[0], err[0][-3000:]
    assert res['ran'] == 4
    assert numbers(SimpleNamespace(rows=res['rows'])) == numbers(sequential)
    assert res['pairs'] == json.loads(json.dumps(sequential.pairs))


def test_ray_restarts_must_not_be_negative(tmp_path):
    with pytest.raises(ValueError, match='ray_restarts must be 0 or more, not -1'):
        run_sweep(_make_spec(**SPEC), tmp_path, backend='ray', ray_restarts=-1, progress=False)


def free_port() -> int:
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]


def start_ray_node(env: dict, *args: str, tries: int = 3) -> subprocess.CompletedProcess:
    """`ray start *args`, tried again when the node misses Ray's startup deadline. Ray waits a fixed 30 s for a new
    raylet to register with the GCS (ray/_private/node.py); on two cores busy with the other test worker's torch jobs
    that wait can run out (CI, 2026-12-04) although nothing is wrong with the cluster."""
    for _ in range(tries):
        p = subprocess.run(['ray', 'start', *args], capture_output=True, text=True, timeout=300, env=env)
        if p.returncode == 0 or 'timed out during startup' not in p.stderr: return p
        if '--head' in args: subprocess.run(['ray', 'stop', '--force'], capture_output=True, timeout=120, env=env)
        time.sleep(5)
    return p


def test_two_node_cluster_spreads_episodes(sequential, tmp_path):
    pytest.importorskip('ray')
    env = {**ray_env(), 'RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER': '1',       # a cluster: every node says its address (loopback)
           'RAY_TMPDIR': tempfile.mkdtemp(prefix='ray', dir='/tmp'),      # AF_UNIX paths must stay short
           'RAY_AUTH_MODE': 'token', 'RAY_AUTH_TOKEN': secrets.token_hex(16)}  # nodes and driver share one token
    port = free_port()
    head = f'127.0.0.1:{port}'
    start = lambda *a: start_ray_node(env, '--num-cpus', '1', '--disable-usage-stats', *a)
    try:
        p = start('--head', '--node-ip-address', '127.0.0.1', '--port', str(port), '--include-dashboard', 'false')
        assert p.returncode == 0, p.stderr[-2000:]
        p = start('--address', head, '--node-ip-address', '127.0.0.1')
        assert p.returncode == 0, p.stderr[-2000:]
        res = sweep_in_subprocess(tmp_path / 'cluster', 'address', head, env=env)
    finally:
        subprocess.run(['ray', 'stop', '--force'], capture_output=True, timeout=120, env=env)
    assert [{k: v for k, v in r.items() if k not in VOLATILE} for r in res['rows']] == numbers(sequential)
    assert len({r['node'] for r in res['rows']}) == 2          # both nodes ran episodes


def test_killed_sweep_reruns_only_what_is_missing(sequential, tmp_path):
    out = tmp_path / 'killed'
    code = ('import sys; from dataenvgym.teaching.sweep import _LOCAL_RAY, _make_spec, run_sweep; '
            f'run_sweep(_make_spec(**{SPEC!r}), sys.argv[1], progress=False)')
    p = subprocess.Popen([sys.executable, '-c', code, str(out)], env=ray_env(), start_new_session=True)
    deadline = time.time() + 240
    while time.time() < deadline and len(list(out.glob('**/result.jsonl'))) < 2 and p.poll() is None: time.sleep(0.2)
    os.killpg(p.pid, signal.SIGKILL); p.wait()
    finished = len(list(out.glob('**/result.jsonl')))
    assert 2 <= finished < 4, finished
    again = run_sweep(_make_spec(**SPEC), out, progress=False)
    assert again.ran == 4 - finished
    assert numbers(again) == numbers(sequential)


def cli(*args, timeout=600):
    return subprocess.run(['dataenvgym', *args], capture_output=True, text=True, timeout=timeout, env=ray_env())


@pytest.mark.parametrize('file, says', [
    ('envs: [skill-lst]\n', "unknown environment 'skill-lst'; valid environment names: open-ended, skill-list, skill-tree"),
    ('policies: [with-state, oracle]\n', "unknown skill-list policy 'oracle'; valid skill-list policy names: with-state"),
    ('presets: [math/huge]\n', "unknown preset 'math/huge'; valid preset names: math/embedded"),
    ('seeds: 9-0\n', "the seed range '9-0' is empty"),
    ('seeds: [-1]\n', 'bad seed -1'),
    ('sed: 3\n', 'sed: Extra inputs are not permitted'),
    ('- skill-list\n', 'must hold a mapping of sweep fields'),
    ('envs: [skill-list\n', 'not valid YAML'),
])
def test_bad_sweep_files_are_one_line_errors_before_anything_runs(tmp_path, file, says):
    (tmp_path / 'sweep.yaml').write_text(file)
    out = cli('sweep', '--file', str(tmp_path / 'sweep.yaml'), '--out', str(tmp_path / 'out'))
    assert out.returncode == 2 and out.stderr.count('\n') == 1 and says in out.stderr, out.stderr[-2000:]
    assert 'Traceback' not in out.stderr and not (tmp_path / 'out').exists()


def test_cli_sweep_prints_the_paired_table_and_writes_its_files(tmp_path):
    out = cli('sweep', '--preset', 'tiny', '--env', 'open-ended', '--seeds', '0-1', '--iterations', '1', '--out', str(tmp_path))
    assert out.returncode == 0, out.stderr[-2000:]
    assert '| math/tiny | open-ended | with-state − no-state | 2 |' in out.stdout
    assert re.search(r'4/4 \[\d\d:\d\d<\d\d:\d\d', out.stderr), out.stderr[-2000:]     # a progress bar: done/total [elapsed<ETA]
    assert {'sweep.json', 'sweep.md', 'sweep.png'} <= {p.name for p in tmp_path.iterdir()}
    again = cli('sweep', '--preset', 'tiny', '--env', 'open-ended', '--seeds', '0-1', '--iterations', '1', '--out', str(tmp_path), '--json')
    res = json.loads(again.stdout)
    assert res['ran'] == 0 and res['pairs'][0]['n'] == 2


def test_ray_backend_without_ray_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, 'ray', None)          # as if Ray were not installed
    with pytest.raises(ImportError, match=r'pip install "dataenvgym\[scale\]"'):
        run_sweep(_make_spec(**SPEC), tmp_path, backend='ray', progress=False)
    with pytest.raises(ValueError, match='valid backends: sequential, ray'):
        run_sweep(_make_spec(**SPEC), tmp_path, backend='dask', progress=False)

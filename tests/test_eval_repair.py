"""`dataenvgym eval repair` end to end, as a user runs it: a real subprocess against a stand-in chat model on 127.0.0.1
(`testing.scripted_repair_model`), in both modes; faults counted and retried; a run killed with SIGKILL and started
again plays every episode exactly once and prints the same table; the API key never reaches the output."""
import json, os, signal, subprocess, sys, time
from pathlib import Path

import pytest

from dataenvgym.testing import scripted_repair_model

TASKS = 'task_0_tutorial,task_1_easy'


def eval_repair(url: str, out: Path, *more: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    cmd = ['dataenvgym', 'eval', 'repair', '--model', 'stand-in', '--base-url', url,
           '--tasks', TASKS, '--out', str(out), '--json', *more]
    return subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=600, **kw)


def episodes(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / 'episodes.jsonl').read_text().splitlines() if line.strip()]


@pytest.mark.parametrize('mode', ['tools', 'text'])
def test_both_modes_print_the_documented_json(tmp_path, mode):
    with scripted_repair_model() as srv:
        run = eval_repair(srv.url, tmp_path / mode, '--mode', mode, '--seeds', '0-2', '--concurrency', '3')
    assert run.returncode == 0, run.stderr
    res = json.loads(run.stdout)
    assert list(res['tasks']) == TASKS.split(',')
    for s in res['tasks'].values():
        assert {'success', 'ci', 'mean_return', 'episodes', 'tokens'} <= set(s)
        assert s['episodes'] == 3 and s['tokens'] > 0 and len(s['ci']) == 2 and s['malformed'] == 0
        assert set(s['baselines']) == {'random', 'heuristic', 'oracle'}
    assert set(res['baselines']) == {'random', 'heuristic', 'oracle'} and res['baselines']['oracle']['success'] == 1.0
    assert res['mode'] == mode and len(srv.requests) > 0
    assert (mode == 'tools') == all('tools' in r for r in srv.requests)


def test_faults_are_retried_and_counted_and_no_episode_is_lost(tmp_path):
    faults = {'429': 0.1, '500': 0.1, 'timeout': 0.05, 'babble': 0.1}
    with scripted_repair_model(faults=faults, timeout_delay=1.5) as srv:
        run = eval_repair(srv.url, tmp_path, '--seeds', '0-5', '--concurrency', '4', '--timeout', '0.5',
                          '--baselines', 'none')
    assert run.returncode == 0, run.stderr
    res = json.loads(run.stdout)
    retries = {k: sum(s['retries'].get(k, 0) for s in res['tasks'].values()) for k in ('429', '500', 'timeout')}
    assert all(v > 0 for v in retries.values()), retries
    assert sum(s['malformed'] for s in res['tasks'].values()) > 0
    assert all(s['episodes'] == 6 and s['unfinished'] == 0 for s in res['tasks'].values())
    assert len(episodes(tmp_path)) == 12 and not (tmp_path / 'errors.jsonl').exists()


def test_a_killed_run_resumes_and_plays_every_episode_exactly_once(tmp_path):
    killed, clean = tmp_path / 'killed', tmp_path / 'clean'
    with scripted_repair_model(delay=0.05) as srv:
        cmd = ['dataenvgym', 'eval', 'repair', '--model', 'stand-in', '--base-url',
               srv.url, '--tasks', TASKS, '--seeds', '0-9', '--concurrency', '4', '--out', str(killed), '--json']
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None:
            if (killed / 'episodes.jsonl').exists() and len(episodes(killed)) >= 5: break
            time.sleep(0.05)
        assert proc.poll() is None, 'the run finished before it could be killed'
        os.killpg(proc.pid, signal.SIGKILL); proc.wait()
        before = len(episodes(killed))
        assert 5 <= before < 20
        again = eval_repair(srv.url, killed, '--seeds', '0-9', '--concurrency', '4')
        fresh = eval_repair(srv.url, clean, '--seeds', '0-9', '--concurrency', '4')
    assert again.returncode == 0 and fresh.returncode == 0, again.stderr + fresh.stderr
    rows = episodes(killed)
    keys = [(r['task'], r['seed']) for r in rows]
    assert len(keys) == len(set(keys)) == 20
    assert json.loads(again.stdout)['played_now'] == 20 - before
    assert (killed / 'results.md').read_text() == (clean / 'results.md').read_text()


def test_the_key_is_read_from_the_environment_and_never_written(tmp_path):
    secret = 'sk-test-0123456789abcdef'
    with scripted_repair_model() as srv:
        run = eval_repair(srv.url, tmp_path, '--seeds', '0', '--api-key-env', 'MY_KEY', '--baselines', 'none',
                          env={'MY_KEY': secret})
    assert run.returncode == 0, run.stderr
    assert secret not in run.stdout + run.stderr
    assert not any(secret in p.read_text(errors='ignore') for p in tmp_path.rglob('*') if p.is_file())


def test_mistakes_are_one_line_errors(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != 'OPENAI_API_KEY'}
    cases = [(['--base-url', 'http://127.0.0.1:9/v1', '--tasks', 'task_9'], 'unknown tasks'),
             (['--base-url', 'http://127.0.0.1:9/v1', '--seeds', '5-1'], 'is empty'),
             (['--base-url', 'http://127.0.0.1:9/v1', '--baselines', 'wizard'], 'unknown baselines'),
             ([], 'OPENAI_API_KEY')]
    for more, says in cases:
        cmd = ['dataenvgym', 'eval', 'repair', '--model', 'm', '--out',
               str(tmp_path / 'x'), *more]
        run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        assert run.returncode == 2, (more, run.stdout, run.stderr)
        last = run.stderr.strip().splitlines()[-1]
        assert last.startswith('dataenvgym eval: error:') and (says is None or says in last), last

"""Teaching environments end to end: a killed episode resumes to the same result; fuzzed actions never corrupt state."""
import json, os, signal, subprocess, sys, tempfile, time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dataenvgym.teaching.presets import teaching_setup

TEACH = ['dataenvgym', 'teach', '--preset', 'tiny', '--env', 'skill-tree', '--iterations', '4', '--seed', '3', '--json']


def _result(stdout: str) -> dict:
    res = json.loads(stdout)
    for it in res['iterations']: it.pop('seconds')
    res.pop('out_dir')
    return res


def test_killed_episode_resumes_to_the_same_result(tmp_path):
    straight = _result(subprocess.run([*TEACH, '--out', str(tmp_path / 'a')], capture_output=True, text=True,
                                      check=True, timeout=600).stdout)
    run = tmp_path / 'b'
    proc = subprocess.Popen([*TEACH, '--out', str(run)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while not (run / 'iteration_1' / 'state.json').exists():
        assert proc.poll() is None and time.time() < deadline, 'the run ended before iteration 1 was saved'
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL); proc.wait()
    assert not (run / 'result.jsonl').exists() and not (run / 'iteration_4').exists(), 'killed too late to test resume'
    done = subprocess.run([*TEACH, "--out", str(run)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    resumed = _result(done.stdout)
    assert resumed == straight
    assert (run / 'iteration_4' / 'data.jsonl').read_text() == (tmp_path / 'a' / 'iteration_4' / 'data.jsonl').read_text()


def _env(name, cache):
    env, _ = teaching_setup(name, preset='tiny', seed_cache=cache)
    env.config = env.config.model_copy(update={'iterations': 10_000})
    env.reset(seed=0)
    return env


names = st.text('abcdefghijklmnopqrstuvwxyz_23', max_size=12)
counts = st.one_of(st.integers(-5, 60), st.integers(-10**12, 10**12))
skills = st.one_of(st.sampled_from(['addition', 'modular_arithmetic']), names)
specs = st.fixed_dictionaries({'n': counts}, optional={'skill': skills, 'subskill': names, 'difficulty': st.integers(-2, 6),
                                                       'like': names, 'note': names, 'bogus': names})
ACTIONS = {
    'open-ended': st.fixed_dictionaries({'specs': st.lists(specs, max_size=4)}),
    'skill-list': st.fixed_dictionaries({'plans': st.lists(st.fixed_dictionaries(
        {'skill': skills, 'n': counts}, optional={'difficulty': st.integers(-2, 6), 'like': st.lists(names, max_size=3)}), max_size=4)}),
    'skill-tree': st.fixed_dictionaries({'decisions': st.lists(st.one_of(
        st.fixed_dictionaries({'kind': st.just('explore'), 'skill': skills}, optional={'n': counts, 'allocation': counts}),
        st.fixed_dictionaries({'kind': st.sampled_from(['exploit', 'delete']), 'skill': skills,
                               'deltas': st.dictionaries(st.one_of(st.sampled_from(['add_2digit', 'add_3digit', 'mod_small']), names), counts, max_size=3)})),
        max_size=4)}),
}


@pytest.mark.parametrize('name', sorted(ACTIONS))
def test_fuzzed_actions_error_cleanly_or_step(name, tmp_path_factory):
    env = _env(name, tmp_path_factory.mktemp('cache'))

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(ACTIONS[name], ACTIONS[name].map(json.dumps), st.dictionaries(names, names, max_size=2), names))
    def check(action):
        before, n_data = env.state.model_dump_json(), len(env.data)
        obs = env.step(action)
        if obs.error:
            assert obs.error.startswith('Invalid action'), obs.error
            assert env.state.model_dump_json() == before and len(env.data) == n_data
        else:
            assert env.state.iteration == json.loads(before)['iteration'] + 1
            assert 0 <= obs.added <= env.config.budget and obs.n_data == len(env.data)
            assert all(a >= 0 for subs in (obs.forest.allocations().values() if name == 'skill-tree' else []) for a in subs.values())
    check()


@pytest.mark.parametrize('name', sorted(ACTIONS))
def test_observations_never_show_test_tasks(name, tmp_path):
    env, policy = teaching_setup(name, preset='tiny', seed_cache=tmp_path)
    obs = env.reset(seed=4)
    obs = env.step(policy(obs))
    text = obs.model_dump_json()
    assert not any(f'"{t.prompt}"' in text for t in env.test)
    assert any(f'"{t.prompt}"' in text for t in env.val) or name == 'skill-tree'

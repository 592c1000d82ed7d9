"""The teaching environments' OpenEnv servers (tiny presets): 8 concurrent WebSocket sessions each equal their
in-process runs, the other two environments over HTTP, bad actions answered, a bounded number of sessions.
Skipped without the `serve` extra."""
import json, socket, threading, time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

import pytest

pytest.importorskip('openenv')
uvicorn = pytest.importorskip('uvicorn')
httpx = pytest.importorskip('httpx')
ws_sync = pytest.importorskip('websockets.sync.client')
from serving import serve  # noqa: E402  (tests/serving.py)

from dataenvgym import registry
from dataenvgym.teaching.serve import SkillListClient, SkillListCommand, make_app

PRESET = 'math/tiny'


@pytest.fixture(scope='module')
def skill_list():
    url, server = serve(make_app('skill-list', PRESET, max_concurrent_envs=8))
    yield url
    server.should_exit = True


def in_process(kind, seed):
    env, policy = registry.make(kind, preset=PRESET), registry.make(f'policy:{kind}/with-state')
    obs, out = env.reset(seed=seed), []
    out.append(obs.model_dump())
    for _ in range(10):
        if obs.done: break
        obs = env.step(policy(obs))
        out.append(obs.model_dump())
    return out


def over_websocket(url, seed):
    policy, out = registry.make('policy:skill-list/with-state'), []
    with SkillListClient(base_url=url, message_timeout_s=120).sync() as client:
        r = client.reset(seed=seed)
        for _ in range(11):
            out.append(r.observation.model_dump(exclude={'metadata'}))
            if r.done: break
            plan = policy(registry.make('skill-list', preset=PRESET).observation_type.model_validate(out[-1]))
            r = client.step(SkillListCommand.model_validate(plan.model_dump()))
        state = client.state()
    assert state.step_count == len(out) - 1 and state.episode_id
    return out


def test_eight_concurrent_sessions_match_in_process(skill_list):
    expected = [in_process('skill-list', seed) for seed in range(8)]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda seed: over_websocket(skill_list, seed), range(8)))
    for seed, (e, g) in enumerate(zip(expected, got)):
        assert g == e, f'session {seed} differs from its in-process run'
    assert len({json.dumps(e, sort_keys=True) for e in expected}) == 8      # the sessions really differ


def test_bad_actions_are_answered_and_the_session_goes_on(skill_list):
    with ws_sync.connect(skill_list.replace('http', 'ws') + '/ws') as ws:
        def send(msg):
            ws.send(json.dumps(msg)); return json.loads(ws.recv(timeout=120))
        assert 'call reset before step' in send({'type': 'step', 'data': {'plans': []}})['data']['message']
        assert send({'type': 'reset', 'data': {'seed': 1}})['type'] == 'observation'
        for bad, says in [({'plans': 'x'}, 'valid list'), ({'plan': []}, 'plan is not a field'),
                          ({'plans': [{'skill': 'arithmetic', 'n': 'many'}]}, 'valid integer'),
                          ({'plans': [{'skill': 'arithmetic', 'n': '5'}]}, 'valid integer'),      # strict: no coercion
                          ({'plans': [{'skill': 'arithmetic', 'n': 5.0}]}, 'valid integer'),
                          ({'plans': [{'skill': 7, 'n': 5}]}, 'valid string')]:
            reply = send({'type': 'step', 'data': bad})
            assert reply['type'] == 'error' and says in reply['data']['message'] and len(json.dumps(reply)) < 600, reply
        reply = send({'type': 'step', 'data': {'plans': [{'skill': 'no such skill', 'n': 5}]}})
        assert reply['type'] == 'observation' and 'no such skill' in reply['data']['observation']['error']
        reply = send({'type': 'step', 'data': {'plans': [{'skill': 'x' * 200_000, 'n': 5}]}})   # not echoed whole
        assert reply['type'] == 'observation' and len(reply['data']['observation']['error']) <= 241, len(json.dumps(reply))
        assert send({'type': 'reset', 'data': {'seed': 1, 'preset': 'math/big'}})['type'] == 'error'
        assert send({'type': 'state'})['data']['step_count'] == 0


@pytest.mark.parametrize('kind', ['open-ended', 'skill-tree'])
def test_the_other_environments_over_http(kind):
    url, server = serve(make_app(kind, PRESET, max_concurrent_envs=1))
    policy = registry.make(f'policy:{kind}/with-state')
    obs_type = registry.make(kind, preset=PRESET).observation_type
    try:
        with httpx.Client(base_url=url, timeout=120) as http:
            r = http.post('/reset', json={'seed': 2}).json()
            sid, out = r['session_id'], [{**r['observation'], 'reward': r['reward'], 'done': r['done']}]
            assert http.post('/reset', json={}).status_code == 503            # one session: the second is refused
            while not out[-1]['done'] and len(out) < 10:
                action = policy(obs_type.model_validate(out[-1])).model_dump(mode='json')
                r = http.post('/step', json={'session_id': sid, 'action': action}).json()
                out.append({**r['observation'], 'reward': r['reward'], 'done': r['done']})
        expected = [json.loads(json.dumps(o)) for o in in_process(kind, 2)]
        assert [{k: v for k, v in o.items() if k != 'metadata'} for o in out] == expected
    finally:
        server.should_exit = True


def test_sessions_are_bounded():
    url, server = serve(make_app('skill-list', PRESET, max_concurrent_envs=2))
    try:
        with ExitStack() as stack:
            conns = [stack.enter_context(ws_sync.connect(url.replace('http', 'ws') + '/ws')) for _ in range(2)]
            for c in conns: c.send(json.dumps({'type': 'state'})); c.recv(timeout=120)
            with ws_sync.connect(url.replace('http', 'ws') + '/ws') as extra:
                assert json.loads(extra.recv(timeout=30))['data']['code'] == 'CAPACITY_REACHED'
    finally:
        server.should_exit = True

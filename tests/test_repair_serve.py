"""The OpenEnv server: concurrent WebSocket sessions reproduce in-process trajectories; malformed messages get an error
reply and the server stays up. Skipped when the `serve` extra (openenv) is not installed."""
import json, socket, threading, time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip('openenv')
uvicorn = pytest.importorskip('uvicorn')
ws_sync = pytest.importorskip('websockets.sync.client')

from dataenvgym.repair.agents import HeuristicAgent, RandomAgent
from dataenvgym.repair.env import RepairEnv
from dataenvgym.repair.serve import RepairClient, RepairCommand, make_app, to_wire

SESSIONS = [(seed, 'task_0_tutorial' if seed % 2 else 'task_1_easy', RandomAgent if seed % 3 else lambda s: HeuristicAgent())
            for seed in range(8)]


@pytest.fixture(scope='module')
def url():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(make_app(max_concurrent_envs=8), host='127.0.0.1', port=port, log_level='warning'))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not server.started:
        assert time.time() < deadline, 'server did not start'
        time.sleep(0.05)
    yield f'http://127.0.0.1:{port}'
    server.should_exit = True
    thread.join(10)


def in_process(seed, task, make_agent):
    env, agent, out = RepairEnv(task), make_agent(seed), []
    obs = env.reset(seed=seed)
    agent.begin(env)
    out.append(to_wire(obs).model_dump())
    while not obs.done:
        obs = env.step(agent.act(obs))
        out.append(to_wire(obs).model_dump())
    return out


def over_websocket(url, seed, task, make_agent):
    agent, out = make_agent(seed), []
    agent.begin(None)
    with RepairClient(base_url=url).sync() as client:
        r = client.reset(seed=seed, task=task)
        out.append(r.observation.model_dump())
        while not r.done:
            r = client.step(RepairCommand(message=agent.act(r.observation)))
            out.append(r.observation.model_dump())
    return out


def test_concurrent_sessions_match_in_process(url):
    expected = [in_process(*s) for s in SESSIONS]
    with ThreadPoolExecutor(len(SESSIONS)) as pool:
        got = list(pool.map(lambda s: over_websocket(url, *s), SESSIONS))
    for s, e, g in zip(SESSIONS, expected, got):
        assert g == e, f'session {s[:2]} differs from the in-process run'
    assert len({json.dumps(e[-1], sort_keys=True) for e in expected}) == len(SESSIONS)  # the sessions really differ


def test_malformed_messages_get_errors_and_server_stays_up(url):
    with ws_sync.connect(url.replace('http', 'ws') + '/ws') as ws:
        for bad in ['not json', json.dumps({'type': 'step', 'data': {'bogus': 1}}), json.dumps({'type': 'fly'})]:
            ws.send(bad)
            reply = json.loads(ws.recv(timeout=30))
            assert reply['type'] == 'error' and reply['data']['message'], reply
        ws.send(json.dumps({'type': 'reset', 'data': {'seed': 1}}))
        assert json.loads(ws.recv(timeout=60))['type'] == 'observation'  # the same session still works
        ws.send(json.dumps({'type': 'step', 'data': {'message': 'fly to the moon'}}))
        reply = json.loads(ws.recv(timeout=30))
        assert reply['type'] == 'observation' and 'unknown command' in reply['data']['observation']['response']
    with RepairClient(base_url=url).sync() as client:  # and so does the server
        assert client.reset(seed=2).observation.budget_remaining > 0

"""The OpenEnv server: concurrent WebSocket sessions reproduce in-process trajectories; malformed messages get an error
reply and the server stays up. Skipped when the `serve` extra (openenv) is not installed."""
import json, os, socket, subprocess, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip('openenv')
uvicorn = pytest.importorskip('uvicorn')
ws_sync = pytest.importorskip('websockets.sync.client')

from dataenvgym.repair.agents import HeuristicAgent, RandomAgent
from dataenvgym.repair.env import RepairEnv
from dataenvgym.repair.serve import RepairClient, RepairCommand, make_app, to_wire

SESSIONS = [(seed, 'task_0_tutorial' if seed % 2 else 'task_1_easy',
             RandomAgent if seed % 3 else lambda s: HeuristicAgent()) for seed in range(8)]
ROOT = Path(__file__).parents[1]


def test_app_is_built_on_first_access_from_the_path_openenv_yaml_names():
    "Importing the module builds no app; the `app` of `openenv.yaml` (what uvicorn loads) is built on first access."
    import yaml
    path = yaml.safe_load((ROOT / 'openenv.yaml').read_text())['app']
    code = ('import dataenvgym.repair.serve as s; assert "app" not in vars(s), "an app was built at import"; '
            'from uvicorn.importer import import_from_string; '
            f'app = import_from_string({path!r}); assert app is s.app is vars(s)["app"]; print(type(app).__name__)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, 'MAX_CONCURRENT_ENVS': '2'})
    assert out.returncode == 0 and out.stdout.strip() == 'FastAPI', out.stderr[-2000:]


@pytest.fixture(scope='module')
def url():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]
    config = uvicorn.Config(make_app(max_concurrent_envs=8), host='127.0.0.1', port=port, log_level='warning')
    server = uvicorn.Server(config)
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
        bads = ['not json', json.dumps({'type': 'step', 'data': {'bogus': 1}}), json.dumps({'type': 'fly'})]
        for bad in bads:
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

"""One seeded repair episode played through every interface the package offers — in process, HTTP, WebSocket (OpenEnv's
client), gymnasium (`gymnasium.make`), TRL's `environment_factory` class and `verifiers` (`vf-eval` on
`dataenvgym.repair.vf`) — with the same commands: every interface must see the same observations and rewards, step for
step. One live uvicorn on 127.0.0.1 for the environment server, one for the scripted model that `vf-eval` talks to;
every loop is bounded. Skipped without the `serve` extra; the verifiers tests skip, saying why, without `vf-eval` next to
this Python (the `verifiers` extra) or in `DATAENVGYM_VERIFIERS_PYTHON`'s folder (a separate environment that has it)."""
import json, os, subprocess, sys
from pathlib import Path

import pytest

pytest.importorskip('openenv')
gym = pytest.importorskip('gymnasium')
httpx = pytest.importorskip('httpx')
from serving import scripted_chat_app, serve  # noqa: E402  (tests/serving.py)

import dataenvgym  # noqa: F401  (registers the gymnasium ids)
from dataenvgym.repair.agents import HeuristicAgent
from dataenvgym.repair.env import RepairEnv, RepairObservation
from dataenvgym.repair.gym import RepairToolEnv, render_observation
from dataenvgym.repair.serve import RepairClient, RepairCommand, make_app, to_wire
from dataenvgym.repair.demos import observation_text

TASK, SEED, MAX_STEPS = 'task_1_easy', 3, 60


def normal(obs: RepairObservation | dict) -> dict:
    "An observation as JSON data in its wire form (what every interface must agree on)."
    if isinstance(obs, dict): obs = RepairObservation.model_validate(obs)
    return json.loads(json.dumps(to_wire(obs).model_dump(mode='json')))


@pytest.fixture(scope='module')
def script():
    "The commands of a heuristic agent on the episode, and the in-process observations (with their rewards)."
    env, agent = RepairEnv(TASK), HeuristicAgent()
    obs = env.reset(seed=SEED); agent.begin(env)
    commands, seen = [], [normal(obs)]
    while not obs.done and len(commands) < MAX_STEPS:
        commands.append(agent.act(obs)); obs = env.step(commands[-1]); seen.append(normal(obs))
    assert obs.done and len(commands) > 2
    return commands, seen


@pytest.fixture(scope='module')
def url():
    url, server = serve(make_app(max_concurrent_envs=4))
    yield url
    server.should_exit = True


def over_http(url, commands):
    with httpx.Client(base_url=url, timeout=60) as http:
        r = http.post('/reset', json={'seed': SEED, 'task': TASK}).json()
        sid, out = r['session_id'], [{**r['observation'], 'reward': r['reward'], 'done': r['done']}]
        for c in commands:
            r = http.post('/step', json={'session_id': sid, 'action': {'message': c}}).json()
            out.append({**r['observation'], 'reward': r['reward'], 'done': r['done']})
        http.post('/close', json={'session_id': sid})
    return [normal(o) for o in out]


def over_websocket(url, commands):
    with RepairClient(base_url=url).sync() as client:
        out = [client.reset(seed=SEED, task=TASK).observation]
        out += [client.step(RepairCommand(message=c)).observation for c in commands]
    return [normal(o.model_dump()) for o in out]


def through_gymnasium(commands):
    env = gym.make(f'dataenvgym/Repair-{TASK}-v0')
    text, info = env.reset(seed=SEED)
    out, texts, rewards = [normal(info['observation'])], [text], []
    for c in commands:
        text, reward, terminated, truncated, info = env.step(c)
        out.append(normal(info['observation'])); texts.append(text); rewards.append(reward)
    assert terminated or truncated
    return out, texts, rewards


def through_trl_factory(commands):
    "What TRL's `environment_factory` does: `reset(**row)`, the tool per call, `get_reward()` at the end."
    env = RepairToolEnv(max_turns=MAX_STEPS)
    texts = [env.reset(task=TASK, seed=SEED, prompt=[])]
    out = [normal(env.obs)]
    for c in commands:
        texts.append(env.command(c)); out.append(normal(env.obs))
    return out, texts, env.rewards, env.get_reward()


def vf_eval_script() -> Path | None:
    "`vf-eval` of this Python's environment, else of `DATAENVGYM_VERIFIERS_PYTHON`'s; None if neither has it."
    for python in (sys.executable, os.environ.get('DATAENVGYM_VERIFIERS_PYTHON')):
        if python and (Path(python).parent / 'vf-eval').is_file(): return Path(python).parent / 'vf-eval'
    return None


@pytest.fixture(scope='module')
def through_verifiers(script, tmp_path_factory):
    "`vf-eval dataenvgym.repair.vf` on the episode, its model a server replaying the commands: the saved rollout."
    vf_eval = vf_eval_script()
    if vf_eval is None:
        pytest.skip('verifiers is not installed: pip install "dataenvgym[verifiers]" (or point '
                    'DATAENVGYM_VERIFIERS_PYTHON at a Python that has it)')
    url, server = serve(scripted_chat_app(script[0]))
    out = tmp_path_factory.mktemp('vf-eval')
    root = str(Path(__file__).parents[1])
    env = {**os.environ, 'SCRIPTED_KEY': 'none', 'PYTHONPATH': os.pathsep.join([root, os.environ.get('PYTHONPATH', '')])}
    args = ['dataenvgym.repair.vf', '-a', json.dumps({'tasks': [TASK], 'seeds': [SEED], 'max_turns': MAX_STEPS + 1}),
            '-m', 'scripted', '-b', f'{url}/v1', '-k', 'SCRIPTED_KEY', '-n', '1', '-r', '1', '-s', '-o', str(out),
            '-C', 'observations', '--disable-env-server', '--disable-tui']
    try: run = subprocess.run([str(vf_eval), *args], env=env, capture_output=True, text=True, timeout=300, cwd=out)
    finally: server.should_exit = True
    assert run.returncode == 0, run.stderr[-3000:]
    (results,) = out.glob('evals/*/*/results.jsonl')
    (rollout,) = [json.loads(line) for line in results.read_text().splitlines()]
    return rollout


def test_in_process_and_verifiers_agree(script, through_verifiers):
    "vf-eval's rollout: the same observations and rewards, the commands as the model's replies, the return as reward."
    commands, seen = script
    rollout = through_verifiers
    assert [normal(o) for o in rollout['observations']] == seen and rollout['error'] is None
    assert [m['content'] for m in rollout['completion'] if m['role'] == 'assistant'] == commands
    assert rollout['reward'] == pytest.approx(sum(o['reward'] for o in seen[1:]))
    assert rollout['stop_condition'] == 'has_final_env_response'
    said = [m['content'] for m in rollout['prompt'] + rollout['completion'] if m['role'] == 'user']
    assert said == [observation_text(RepairObservation.model_validate(o)) for o in seen]


def test_in_process_and_http_agree(script, url):
    assert over_http(url, script[0]) == script[1]


def test_in_process_and_websocket_agree(script, url):
    assert over_websocket(url, script[0]) == script[1]


def test_in_process_and_gymnasium_agree(script):
    commands, seen = script
    out, texts, rewards = through_gymnasium(commands)
    assert out == seen and rewards == [o['reward'] for o in seen[1:]]
    assert texts == [render_observation(RepairObservation.model_validate(o)) for o in seen]


def test_in_process_and_trl_factory_agree(script):
    commands, seen = script
    out, texts, rewards, total = through_trl_factory(commands)
    assert out == seen and rewards == [o['reward'] for o in seen[1:]] and total == pytest.approx(sum(rewards))
    assert texts == [observation_text(RepairObservation.model_validate(o)) for o in seen]


def runs_of_five(url, commands) -> dict:
    return {'http': over_http(url, commands), 'websocket': over_websocket(url, commands),
            'gymnasium': through_gymnasium(commands)[0], 'trl': through_trl_factory(commands)[0]}


def test_all_five_interfaces_agree(script, url):
    "The same episode, five ways (all but verifiers): identical observations and rewards everywhere."
    commands, seen = script
    for name, out in runs_of_five(url, commands).items(): assert out == seen, f'{name} differs from the in-process episode'


def test_all_six_interfaces_agree(script, url, through_verifiers):
    "The same episode, six ways: identical observations and rewards everywhere."
    commands, seen = script
    runs = {**runs_of_five(url, commands), 'verifiers': [normal(o) for o in through_verifiers['observations']]}
    for name, out in runs.items(): assert out == seen, f'{name} differs from the in-process episode'

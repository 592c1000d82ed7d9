"""One seeded repair episode played through every interface the package offers — in process, HTTP, WebSocket (OpenEnv's
client), gymnasium (`gymnasium.make`), TRL's `environment_factory` class and `verifiers` 0.4 (`vf-eval` on the plugin
`dataenvgym_repair`) — with the same commands: every interface must see the same observations and rewards, step for
step. One live uvicorn on 127.0.0.1 for the environment server, one for the scripted model that `vf-eval` talks to;
every loop is bounded. Skipped without the `serve` extra; the verifiers tests skip, saying why, without a verifiers 0.4
`vf-eval` next to this Python (the `verifiers` extra) or in `DATAENVGYM_VERIFIERS_PYTHON`'s folder (a separate
environment that has it: 0.4 cannot co-install with the `serve` extra), or without `uv` (its chat harness needs it)."""
import json, os, shutil, subprocess, sys
from pathlib import Path

import pytest

pytest.importorskip('openenv')
gym = pytest.importorskip('gymnasium')
httpx = pytest.importorskip('httpx')
from serving import scripted_chat_app, serve  # noqa: E402  (tests/serving.py)

import dataenvgym  # noqa: F401  (registers the gymnasium ids)
from dataenvgym.repair.agents import HeuristicAgent
from dataenvgym.repair.env import RepairEnv, RepairObservation
from dataenvgym.repair.gym import RepairToolEnv, _render_observation
from dataenvgym.repair.serve import RepairClient, RepairCommand, make_app, _to_wire
from dataenvgym.repair.demos import observation_text

TASK, SEED, MAX_STEPS = 'task_1_easy', 3, 60


def normal(obs: RepairObservation | dict) -> dict:
    "An observation as JSON data in its wire form (what every interface must agree on)."
    if isinstance(obs, dict): obs = RepairObservation.model_validate(obs)
    return json.loads(json.dumps(_to_wire(obs).model_dump(mode='json')))


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


def verifiers_version(python: Path) -> str | None:
    "The verifiers version `python` has (None if it has none)."
    code = 'import importlib.metadata as m; print(m.version("verifiers"))'
    r = subprocess.run([str(python), '-c', code], capture_output=True, text=True, timeout=120)
    return r.stdout.strip() if r.returncode == 0 else None


def vf_eval_script() -> Path | None:
    "verifiers 0.4's `vf-eval`: this Python's, else `DATAENVGYM_VERIFIERS_PYTHON`'s; None if neither has it."
    for python in (sys.executable, os.environ.get('DATAENVGYM_VERIFIERS_PYTHON')):
        if not python or not (Path(python).parent / 'vf-eval').is_file(): continue
        if (verifiers_version(Path(python)) or '').startswith('0.4'): return Path(python).parent / 'vf-eval'
    return None


def text(message: dict) -> str:
    "The text of a chat message on a trace (a list of parts is joined)."
    content = message.get('content')
    if isinstance(content, list): content = ''.join(p.get('text', '') for p in content if isinstance(p, dict))
    return content or ''


@pytest.fixture(scope='module')
def through_verifiers(script, tmp_path_factory):
    "`vf-eval dataenvgym_repair` on the episode, its model a server replaying the commands: the saved trace."
    vf_eval = vf_eval_script()
    if vf_eval is None:
        pytest.skip('verifiers 0.4 is not installed: pip install "dataenvgym[verifiers]" in its own environment and '
                    'point DATAENVGYM_VERIFIERS_PYTHON at its Python (it cannot co-install with the serve extra)')
    path = os.pathsep.join([str(vf_eval.parent), os.environ.get('PATH', '')])
    if shutil.which('uv', path=path) is None:
        pytest.skip("vf-eval's `null` chat harness runs its client with uv: pip install uv (beside vf-eval or on PATH)")
    url, server = serve(scripted_chat_app(script[0]))
    out = tmp_path_factory.mktemp('vf-eval')
    root = str(Path(__file__).parents[1])         # the checkout's dataenvgym and dataenvgym_repair, on both sides
    env = {**os.environ, 'SCRIPTED_KEY': 'none', 'PATH': path,
           'PYTHONPATH': os.pathsep.join([root, os.environ.get('PYTHONPATH', '')])}
    args = ['dataenvgym_repair', '--env.taskset.tasks', TASK, '--env.taskset.seeds', str(SEED),
            '--env.player.max-turns', str(MAX_STEPS), '-m', 'scripted', '--client.base-url', f'{url}/v1',
            '--client.api-key-var', 'SCRIPTED_KEY', '-n', '1', '-r', '1', '-c', '1', '-o', str(out),
            '--no-push', '--no-rich']
    try: run = subprocess.run([str(vf_eval), *args], env=env, capture_output=True, text=True, timeout=600, cwd=out)
    finally: server.should_exit = True
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    (traces,) = out.glob('*/traces.jsonl')
    (episode,) = [json.loads(line) for line in traces.read_text().splitlines() if line.strip()]
    assert episode['ok'] and not episode['errors'], episode['errors']
    (trace,) = episode['traces']
    return trace


def test_in_process_and_verifiers_agree(script, through_verifiers):
    "vf-eval's trace: the same observations and step rewards, the commands as the replies, the return as the reward."
    commands, seen = script
    trace, info = through_verifiers, through_verifiers['info']
    assert [normal(o) for o in info['observations']] == seen and trace['ok'] and not trace['errors']
    assert info['step_rewards'] == pytest.approx([o['reward'] for o in seen[1:]])
    assert [text(n['message']) for n in trace['nodes'] if n.get('sampled')] == commands
    assert list(trace['rewards']) == ['episode_return']
    assert trace['rewards']['episode_return']['score'] == pytest.approx(sum(o['reward'] for o in seen[1:]))
    assert trace['stop_condition'] == 'user_closed'       # the episode ended, not the seat's max_turns
    said = [text(n['message']) for n in trace['nodes'] if n['message']['role'] == 'user']
    texts = [observation_text(RepairObservation.model_validate(o)) for o in seen]
    assert said == texts[:-1] and info['final_observation_text'] == texts[-1]     # the last one is kept, not sent


def test_in_process_and_http_agree(script, url):
    assert over_http(url, script[0]) == script[1]


def test_in_process_and_websocket_agree(script, url):
    assert over_websocket(url, script[0]) == script[1]


def test_in_process_and_gymnasium_agree(script):
    commands, seen = script
    out, texts, rewards = through_gymnasium(commands)
    assert out == seen and rewards == [o['reward'] for o in seen[1:]]
    assert texts == [_render_observation(RepairObservation.model_validate(o)) for o in seen]


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
    runs = {**runs_of_five(url, commands), 'verifiers': [normal(o) for o in through_verifiers['info']['observations']]}
    for name, out in runs.items(): assert out == seen, f'{name} differs from the in-process episode'

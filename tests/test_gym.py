"""The gymnasium ids of every environment (registered by `import dataenvgym` without importing gymnasium), the repair
wrapper (check_env on every task, `truncated` when the budget ends an episode, a vector env), the teaching wrapper
(every id made, a step played; check_env with DATAENVGYM_SLOW=1), and the TRL `environment_factory` adapter (a few GRPO
steps of the tiny agent on CPU, the reward the environment's return). Skipped without gymnasium (`serve` extra)."""
import json, math, os, subprocess, sys

import pytest

gym = pytest.importorskip('gymnasium')
from gymnasium.utils.env_checker import check_env

from dataenvgym.repair.agents import HeuristicAgent
from dataenvgym.repair.env import RepairEnv
from dataenvgym.repair.gym import RepairGymEnv, RepairToolEnv
from dataenvgym.repair.tool_train import tool_agent, tool_dataset, tool_grpo_train, tool_warmup


from dataenvgym import gyms
from dataenvgym.repair.tasks import TASKS

REPAIR_IDS = [i for i in gyms._env_specs() if '/Repair' in i]
TEACHING_IDS = [i for i in gyms._env_specs() if '/Repair' not in i]


def test_import_registers_the_ids_without_importing_gymnasium():
    "`import dataenvgym` loads no gymnasium; its first import registers every id; `module:id` works without the import."
    code = ('import sys, dataenvgym; assert "gymnasium" not in sys.modules, "gymnasium imported"; '
            'import gymnasium as gym; print(sorted(i for i in gym.registry if i.startswith("dataenvgym/")))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().replace("'", '"')) == sorted(gyms._env_specs())
    code = 'import gymnasium as gym; print(type(gym.make("dataenvgym:dataenvgym/Repair-v0").unwrapped).__name__)'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == 'RepairGymEnv', out.stderr[-2000:]
    assert gyms.REPAIR_TASKS == tuple(TASKS)


@pytest.mark.parametrize('env_id', REPAIR_IDS)
def test_check_env_passes_for_every_repair_id(env_id):
    env = gym.make(env_id, max_chars=1024)
    check_env(env.unwrapped, skip_render_check=True)
    assert env.unwrapped.env.reset(seed=0).metadata['task'] == gyms._env_specs()[env_id][1].get('task', 'task_0_tutorial')


def test_the_budget_ending_an_episode_truncates_it():
    "Spending the step budget ends the episode as a truncation; the agent's submit as a termination."
    env = gym.make('dataenvgym/Repair-v0')
    env.reset(seed=3)
    for n in range(100):
        _, _, terminated, truncated, info = env.step('inspect_dataset')
        if terminated or truncated: break
    assert (terminated, truncated) == (False, True) and info['observation']['budget_remaining'] == 0, n
    env.reset(seed=3)
    assert env.step('submit')[2:4] == (True, False)


@pytest.mark.parametrize('env_id', TEACHING_IDS)
def test_every_teaching_id_is_made(env_id):
    env = gym.make(env_id)
    assert env.unwrapped.env.name == gyms._env_specs()[env_id][1]['kind']


def test_a_teaching_step_through_gymnasium_is_the_environment_s():
    from dataenvgym import registry
    env, ref = gym.make('dataenvgym/SkillList-v0'), registry.make('skill-list', preset='math/tiny')
    text, info = env.reset(seed=1)
    assert info['observation'] == ref.reset(seed=1).model_dump() and env.observation_space.contains(text)
    text, reward, terminated, truncated, info = env.step('not json')        # refused by the environment, as in process
    obs = ref.step('not json')
    assert (reward, terminated, truncated) == (obs.reward, False, obs.done) and info['observation'] == obs.model_dump()
    assert json.loads(text)['error'] and env.observation_space.contains(text)


@pytest.mark.skipif(not os.environ.get('DATAENVGYM_SLOW'), reason='each reset trains a student (~10 s): DATAENVGYM_SLOW=1')
@pytest.mark.parametrize('env_id', TEACHING_IDS)
def test_check_env_passes_for_every_teaching_id(env_id):
    check_env(gym.make(env_id).unwrapped, skip_render_check=True)


def test_an_episode_matches_the_environment():
    "The wrapper's rewards and end are the environment's, step for step (a heuristic agent)."
    genv, env, agent = RepairGymEnv('task_1_easy'), RepairEnv('task_1_easy'), HeuristicAgent()
    _, info = genv.reset(seed=4)
    obs = env.reset(seed=4)
    agent.begin(env)
    assert info['observation'] == obs.model_dump()
    for _ in range(60):
        cmd = agent.act(obs)
        obs = env.step(cmd)
        text, reward, terminated, truncated, info = genv.step(cmd)
        assert (reward, terminated or truncated) == (obs.reward, obs.done) and genv.observation_space.contains(text)
        if terminated or truncated: break
    assert terminated and not truncated


def test_a_vector_env_runs():
    envs = gym.vector.SyncVectorEnv([lambda: RepairGymEnv(max_chars=256)] * 2)
    obs, _ = envs.reset(seed=[1, 2])
    assert len(obs) == 2 and obs[0] != obs[1]
    obs, rewards, terminated, truncated, _ = envs.step(('query_cleaner', 'submit'))
    assert list(terminated) == [False, True] and all(math.isfinite(r) for r in rewards)
    envs.close()


def test_tool_env_reward_is_the_return():
    tenv, ref, total = RepairToolEnv(), RepairEnv(), 0.0
    assert 'accuracy' in tenv.reset(task='task_0_tutorial', seed=2, prompt=[])
    ref.reset(seed=2)
    for cmd in ['inspect_dataset', 'query_cleaner', 'apply 1', 'bogus', 'submit']:
        tenv.command(cmd); total += ref.step(cmd).reward
    assert tenv.get_reward() == pytest.approx(total)
    assert 'over' in tenv.command('validate') and tenv.get_reward() == pytest.approx(total)


def test_grpo_through_environment_factory_on_cpu(tmp_path):
    "Two GRPO steps of the tiny agent with `environment_factory=RepairToolEnv`; the logged reward is the env's return."
    model, tok = tool_agent(seed=0)
    trainer = tool_grpo_train(model, tok, tool_dataset(seeds=range(4)), steps=2, output_dir=str(tmp_path))
    logs = [h for h in trainer.state.log_history if 'reward' in h]
    assert trainer.state.global_step == 2 and len(logs) == 2
    assert all(math.isfinite(h['reward']) and 'rewards/RepairToolEnv/mean' in h for h in logs), logs
    assert all(h['reward'] == h['rewards/RepairToolEnv/mean'] for h in logs)   # the only reward: the env's return


@pytest.mark.skipif(not os.environ.get('DATAENVGYM_SLOW'),
                    reason='a 100-step SFT warm-up and 16 rollouts (~7 min on two busy cores) before GRPO: DATAENVGYM_SLOW=1')
def test_after_a_warm_up_the_tiny_agent_calls_the_tool_and_earns_a_reward(tmp_path):
    "SFT on tool-call demonstrations, then GRPO with `environment_factory`: the rollouts call `command`, reward != 0."
    rows = tool_dataset(seeds=range(8))
    model, tok = tool_agent(seed=0)
    warm = tool_warmup(model, tok, rows, steps=100)
    trainer = tool_grpo_train(warm.model, tok, rows, steps=2, max_completion_length=512, num_generations=4, per_step=2,
                               output_dir=str(tmp_path))
    logs = [h for h in trainer.state.log_history if 'reward' in h]
    assert len(logs) == 2 and all(h['tools/call_frequency'] > 0 for h in logs), logs
    assert any(h['reward'] != 0 for h in logs), logs

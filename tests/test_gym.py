"""The repair environment's gymnasium wrapper (check_env, a vector env) and TRL `environment_factory` adapter (a few
GRPO steps of the tiny agent on CPU, the reward the environment's return). Skipped without gymnasium (`serve` extra)."""
import math

import pytest

gym = pytest.importorskip('gymnasium')
from gymnasium.utils.env_checker import check_env

from dataenvgym.repair.agents import HeuristicAgent
from dataenvgym.repair.env import RepairEnv
from dataenvgym.repair.gym import RepairGymEnv, RepairToolEnv, tool_agent, tool_dataset, tool_grpo_train


def test_check_env_passes():
    check_env(RepairGymEnv(), skip_render_check=True)
    check_env(RepairGymEnv('task_1_easy', max_chars=512), skip_render_check=True)


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
        assert (reward, terminated, truncated) == (obs.reward, obs.done, False) and genv.observation_space.contains(text)
        if terminated: break
    assert terminated


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

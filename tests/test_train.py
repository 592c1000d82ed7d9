"The training path of `dataenvgym.repair.train` on a CPU: warm-up data, SFT, GRPO with the environment in the loop."
import subprocess, sys, time
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from dataenvgym.repair.agents import HeuristicAgent, SubmitAgent, play_episode
from dataenvgym.repair.env import RepairEnv
from dataenvgym.lm import (GRPOSettings, SFTSettings, agent_messages, encode, env_return, grpo_train,
                           length_report, render, sft_train, tiny_agent)
from dataenvgym.repair.demos import record_rollouts, warmup_dataset
from dataenvgym.repair.rollouts import EnvRollouts, play_episodes, scripted


def _fake_trainer(model, tok):
    return SimpleNamespace(model=model, processing_class=tok, temperature=1.0, state=SimpleNamespace(global_step=0),
                           accelerator=SimpleNamespace(unwrap_model=lambda m: m))


@pytest.mark.parametrize('seed', [1, 3])
def test_reward_depends_on_completion(seed):
    "Same seed, different commands -> different reward, each equal to the environment's return for those commands."
    model, tok = tiny_agent()
    rewards = {}
    for name, commands, agent in [('heuristic', HeuristicAgent.script, HeuristicAgent()), ('submit', ['submit'], SubmitAgent()),
                                  ('clean', ['query_cleaner', 'apply 1', 'validate', 'submit'], None)]:
        ro = EnvRollouts(seeds=[seed], generate=scripted(commands))
        p = ro.dataset[0]['prompt']
        out = ro([p, p], _fake_trainer(model, tok))
        r = env_return([p, p], None, out['env_return'], out['env_seed'], [seed, seed])
        assert r[0] == r[1]                                      # same seed, same commands: same reward
        rewards[name] = r[0]
        if agent: assert r[0] == pytest.approx(play_episode(RepairEnv(), agent, seed).ret, abs=1e-12)
    assert len(set(rewards.values())) == 3, rewards


def test_rollout_tokens_are_the_rendered_chat():
    model, tok = tiny_agent()
    r = play_episodes(model, tok, [('task_0_tutorial', 5)], scripted(['query_cleaner', 'apply 1', 'apply 2', 'apply 3', 'validate', 'submit']))[0]
    assert r.prompt_ids + r.completion_ids == encode(tok, render(tok, r.messages()))
    assert len(r.mask) == len(r.completion_ids) and sum(r.mask) == sum(len(c) + 1 for c in r.commands)


def test_length_check_fails_when_answers_would_be_cut():
    _, tok = tiny_agent()
    ds = warmup_dataset(record_rollouts(seeds=range(3)))
    rep = length_report(ds, tok, 768)
    assert rep['answers_cut'] == 0 and rep['longest'] <= 768
    with pytest.raises(ValueError, match='would lose command tokens'): length_report(ds, tok, rep['longest'] - 1)


def test_cpu_path_sft_then_grpo_under_3_minutes():
    "A tiny agent built from a config: SFT on real rollouts, then GRPO steps with the environment in the loop."
    torch.set_num_threads(2)
    t0 = time.perf_counter()
    model, tok = tiny_agent()
    ds = warmup_dataset(record_rollouts(seeds=range(10)))
    sft = sft_train(model, tok, ds, SFTSettings(max_steps=30))
    losses = [h['loss'] for h in sft.state.log_history if 'loss' in h]
    assert losses[-1] < losses[0] / 2
    before = {k: v.clone() for k, v in sft.model.state_dict().items()}
    rollouts = EnvRollouts(seeds=range(50, 60), max_turns=4, max_new_tokens=16)   # short episodes keep the test fast
    grpo = grpo_train(sft.model, tok, rollouts, GRPOSettings(steps=3, lr=1e-3))
    assert len(rollouts.log) == 3 * 8
    for g in range(0, 24, 4): assert len({x['seed'] for x in rollouts.log[g:g + 4]}) == 1
    logged = [h['reward'] for h in grpo.state.log_history if 'reward' in h]
    assert logged == pytest.approx([np.mean([x['return'] for x in rollouts.log[i:i + 8]]) for i in range(0, 24, 8)], abs=1e-5)
    changed = any(not torch.equal(before[k], v) for k, v in grpo.model.state_dict().items())
    advantages = any(len({x['return'] for x in rollouts.log[g:g + 4]}) > 1 for g in range(0, 24, 4))
    assert changed == advantages       # GRPO moves the weights exactly when some group's returns differ
    assert time.perf_counter() - t0 < 180


@pytest.mark.parametrize('name', ['tiny', 'tiny-curriculum'])
def test_named_configs_warmup_fits(name):
    "The warm-up chats of each named tiny config pass the length check at the config's max length (no command is cut)."
    from dataenvgym.repair.train import TRAIN_CONFIGS, load_agent
    c = TRAIN_CONFIGS[name]
    _, tok = load_agent(c.model, c)
    ds = warmup_dataset(record_rollouts(c.warmup_agents, range(*c.warmup_seeds), c.tasks))
    rep = length_report(ds, tok, c.sft.max_length)
    assert rep['cut'] == 0 and rep['examples'] == len(ds) > 0


SFT_WEIGHTS = '''
import hashlib, sys, torch
torch.set_num_threads(int(sys.argv[1]))
from dataenvgym.lm import SFTSettings, sft_train, tiny_agent
from dataenvgym.repair.demos import record_rollouts, warmup_dataset
model, tok = tiny_agent()
sft = sft_train(model, tok, warmup_dataset(record_rollouts(seeds=range(1))), SFTSettings(max_steps=4))
print(hashlib.sha256(b''.join(p.detach().numpy().tobytes() for p in sft.model.parameters())).hexdigest())
'''


def test_sft_gives_the_same_weights_in_new_processes_on_one_or_two_threads():
    "The same seed and data give the same SFT model, bit for bit: in a new interpreter, on one torch thread or two."
    runs = [subprocess.run([sys.executable, '-c', SFT_WEIGHTS, str(n)], capture_output=True, text=True, timeout=600)
            for n in (2, 1)]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-2000:] for r in runs]
    assert len({r.stdout.strip().splitlines()[-1] for r in runs}) == 1, [r.stdout[-200:] for r in runs]

"""`experiments/repair-grpo-decisions/`: GRPO credited on one decision (`decisions.py`: `DecisionRollouts`,
`BranchRollouts`), and `grpo_decisions.py`, which runs them from a saved agent and scores it before and after."""
import importlib.util, json, subprocess, sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from dataenvgym.lm import GRPOSettings, grpo_train, save_agent, tiny_agent
from dataenvgym.repair.agents import InspectorAgent
from dataenvgym.repair.demos import record_episode
from dataenvgym.repair.env import RepairEnv

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / 'experiments' / 'repair-grpo-decisions'
SCRIPT = HERE / 'grpo_decisions.py'


def decisions():
    "The experiment's module `decisions.py`, loaded from its folder."
    spec = importlib.util.spec_from_file_location('decisions', HERE / 'decisions.py')
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
    return module


def fake_trainer(model, tok, step: int = 0):
    "What a `rollout_func` reads of TRL's trainer."
    return SimpleNamespace(model=model, processing_class=tok, temperature=1.0, state=SimpleNamespace(global_step=step),
                           accelerator=SimpleNamespace(unwrap_model=lambda m: m))


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)


@pytest.fixture(scope='module')
def agent(tmp_path_factory) -> str:
    model, tok = tiny_agent(max_length=3072)
    return str(save_agent(model, tok, tmp_path_factory.mktemp('agent') / 'tiny'))


def test_control_run_prints_before_after_and_the_paired_difference(agent):
    r = run('--agent', agent, '--reward', 'apply 1', '--seeds', '2100:3', '--eval-seeds', '0:3', '--steps', '2',
            '--per-step', '2', '--num-generations', '2', '--lr', '1e-3', '--threads', '1', '--sft-baseline')
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out['reward'] == 'apply 1' and out['steps'] == 2 and out['train_states'] > 0 and out['eval_states'] > 0
    assert set(out['before']) == set(out['after']) == {'match', 'reward'}
    assert all(0 <= out[w][k] <= 1 for w in ('before', 'after') for k in ('match', 'reward'))
    d = out['after_minus_before']['reward']
    assert d['n'] == 3 and (d['lo'] is None or d['lo'] <= d['mean'] <= d['hi'])
    assert len(out['training']['reward']) == 2 and out['seconds_per_step'] > 0 and out['env_share'] == 0
    # the same start trained by SFT on the same decisions, paired with GRPO on the evaluation seeds
    assert set(out['sft']) == {'after', 'after_minus_before', 'grpo_minus_sft', 'seconds_per_step'}
    assert out['sft']['grpo_minus_sft']['match']['n'] == 3 and 0 <= out['sft']['after']['match'] <= 1


def test_bad_input_is_refused_with_a_clear_error(agent):
    r = run('--agent', agent, '--seeds', '0:5', '--eval-seeds', '3:5')
    assert r.returncode != 0 and '--seeds and --eval-seeds overlap' in r.stderr
    r = run('--agent', agent, '--reward', 'fix it', '--seeds', '2100:1', '--eval-seeds', '0:1')
    assert r.returncode != 0 and "--reward is episode, demonstrator, a command of task_4_expert" in r.stderr
    r = run('--agent', agent, '--seeds', 'ten')
    assert r.returncode != 0 and "--seeds: bad seed 'ten'" in r.stderr


def test_contextual_control_is_a_named_rule(agent):
    r = run('--agent', agent, '--reward', 'rescale-first', '--seeds', '2100:3', '--eval-seeds', '0:4', '--steps', '1',
            '--per-step', '2', '--num-generations', '2', '--threads', '1')
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out['reward'] == 'rescale-first' and 0 <= out['before']['reward'] <= 1 and out['env_share'] == 0


def test_states_all_takes_the_demonstrators_failures_too(agent):
    "The inspector fails expert seed 14: its decisions there are prompts only with `--states all`."
    args = ('--agent', agent, '--reward', 'apply 1', '--seeds', '2100:2', '--eval-seeds', '14:1', '--steps', '1',
            '--per-step', '2', '--num-generations', '2', '--threads', '1')
    r = run(*args)
    assert r.returncode != 0 and 'no decisions: no successful trajectory' in r.stderr
    r = run(*args, '--states', 'all')
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out['states'] == 'all' and out['eval_states'] > 0


def test_branch_rollouts_train_on_the_agents_own_decisions(agent):
    "`--rollouts branch`: GRPO on one of the agent's decisions in its own episode; the greedy success curve is there."
    r = run('--agent', agent, '--rollouts', 'branch', '--reward', 'success', '--skip', '1', '--seeds', '2100:3',
            '--eval-seeds', '0:2', '--episode-seeds', '0:2', '--steps', '2', '--per-step', '2',
            '--num-generations', '2', '--threads', '1')
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out['rollouts'] == 'branch' and out['skip'] == 1 and out['train_states'] == 3
    assert len(out['training']['reward']) == len(out['training']['own_success']) == 2
    assert all(0 <= x <= 1 for x in out['training']['own_success']) and out['episodes']['after_minus_before']['n'] == 2
    r = run('--agent', agent, '--rollouts', 'branch', '--reward', 'demonstrator', '--seeds', '2100:1',
            '--eval-seeds', '0:1')
    assert r.returncode != 0 and '--rollouts branch takes --reward episode or success' in r.stderr


def test_decision_rollouts_score_a_reply_at_the_demonstrators_decisions():
    "On two expert seeds the inspector answers two site reports each; its own command gives back its episode."
    d = decisions()
    dr = d.DecisionRollouts('task_4_expert', seeds=range(2))
    seed, turn, answer = dr.state_of(dr.dataset[0]['prompt'])
    own = record_episode(RepairEnv(), InspectorAgent(), seed, 'task_4_expert')
    assert own.commands[turn - 1] == 'inspect_groups' and own.commands[turn] == answer
    assert dr.finish(seed, turn, answer) == (own.ret, own.success)
    assert own.success and not dr.finish(seed, turn, 'submit')[1]
    # commands are read as the environment reads them
    assert dr.score(dr.dataset[0]['prompt'], answer.upper())['reward'] == own.ret + 1.0
    assert set(dr.dataset['seed']) == {0, 1}
    control = d.DecisionRollouts('task_4_expert', seeds=range(2), reward='apply 1')
    assert [control.score(dr.dataset[0]['prompt'], c)['reward'] for c in ('apply 1', 'apply 2')] == [1.0, 0.0]
    with pytest.raises(ValueError, match="reward is 'episode', 'demonstrator', one command of task_4_expert"):
        d.DecisionRollouts('task_4_expert', seeds=range(1), reward='fix it')
    # a rule of the observation's text: `apply 1` where the first fix listed is a rescale, else `apply 2`
    rule = lambda text, reply: float(reply == ('apply 1' if text.startswith('fixes: 1 rescale') else 'apply 2'))
    by_rule = d.DecisionRollouts('task_4_expert', seeds=range(4), reward=rule)
    prompts = by_rule.dataset['prompt']
    first = [p for p in prompts if p[-1]['content'].startswith('fixes: 1 rescale')]
    other = [p for p in prompts if not p[-1]['content'].startswith('fixes: 1 rescale')]
    assert first and other
    assert [by_rule.score(first[0], c)['reward'] for c in ('apply 1', 'apply 2')] == [1.0, 0.0]
    assert [by_rule.score(other[0], c)['reward'] for c in ('apply 1', 'apply 2')] == [0.0, 1.0]


def test_states_all_holds_the_decisions_where_the_demonstrator_failed():
    "On expert seed 14 the inspector fails; at its first site report other replies succeed where its answer fails."
    d = decisions()
    with pytest.raises(ValueError, match='no decisions'): d.DecisionRollouts('task_4_expert', seeds=[14])
    failed = d.DecisionRollouts('task_4_expert', seeds=[14], states='all')
    seed, turn, answer = failed.state_of(failed.dataset[0]['prompt'])
    assert (seed, turn) == (14, 1) and not failed.finish(seed, turn, answer)[1]
    better = [c for c in [f'apply {n}' for n in range(1, 6)] + ['query_cleaner'] if failed.finish(seed, turn, c)[1]]
    assert better and answer not in better
    with pytest.raises(ValueError, match="states is 'successful'"):
        d.DecisionRollouts('task_4_expert', seeds=[14], states='failed')


def test_grpo_moves_a_fixed_answer_on_single_decisions():
    "The control on the untrained tiny agent: GRPO rewarding `apply 1` makes it the greedy answer at most decisions."
    d = decisions()
    torch.manual_seed(0)
    fresh, ftok = tiny_agent()
    control = d.DecisionRollouts('task_4_expert', seeds=range(20), reward='apply 1')
    before = np.mean([r['reward'] for r in control.evaluate(fresh, ftok)])
    settings = GRPOSettings(steps=10, num_generations=8, per_step=4, lr=1e-3)
    trained = grpo_train(fresh, ftok, control, settings).model
    after = np.mean([r['reward'] for r in control.evaluate(trained, ftok)])
    assert after > max(0.5, before + 0.3), (before, after)
    assert len(control.log) == 10 * 4 * 8
    assert all(r['reward'] == float(r['reply'] == 'apply 1') for r in control.log)


def test_branch_rollouts_train_on_one_reply_in_the_agents_context():
    "Every episode of a group replays the agent's commands to the drawn decision; the completion is that one reply."
    d = decisions()
    torch.manual_seed(0)
    model, tok = tiny_agent()
    br = d.BranchRollouts('task_4_expert', seeds=range(2100, 2102), max_turns=8, max_length=768)
    played = ['inspect_groups', 'apply 2', 'query_cleaner', 'inspect_groups', 'apply 1', 'validate']
    assert br.branch_turn(played, 0, 0) == 4
    assert br.branch_turn(['query_cleaner', 'validate'], 0, 0) == 0     # no site report: the first reply
    two = ['inspect_groups', 'apply 2', 'inspect_groups', 'apply 1', 'submit']
    assert {br.branch_turn(two, 0, s) for s in range(20)} == {1, 3}    # drawn from seed and step
    assert d.BranchRollouts(skip=1, seeds=[0]).branch_turn(two, 0, 0) == 3    # the first site report left out
    with pytest.raises(ValueError, match="reward is 'success' or 'episode'"): d.BranchRollouts(reward='accuracy', seeds=[0])
    prompts = [p for p in br.dataset['prompt'] for _ in range(4)]
    out = br(prompts, fake_trainer(model, tok))
    assert out['env_seed'] == [2100] * 4 + [2101] * 4
    for g in (0, 4):
        rows, ctx = br.log[g:g + 4], out['prompt_ids'][g:g + 4]
        turn = rows[0]['turn']
        assert all(c == ctx[0] for c in ctx)          # one context a group: the agent's chat up to the decision
        assert ctx[0].count(tok.eos_token_id) == turn     # the agent's `turn` replies before it, each closed
        for k, r in enumerate(rows):
            assert tok.decode(out['completion_ids'][g + k]).replace(tok.eos_token, '') == r['reply']
        assert out['env_return'][g:g + 4] == [float(r['success']) for r in rows]
    # given the inspector's commands as the plan, every episode replays them to turn 4 (the same observations),
    # then samples a reply there
    ins = record_episode(RepairEnv(), InspectorAgent(), 2100, 'task_4_expert')
    again, spans = d.play_branched(model, tok, [('task_4_expert', 2100)] * 3, [(ins.commands, 4)] * 3, br.trie,
                                   max_turns=8, max_length=768, temperature=1.0)
    for r, (a, b) in zip(again, spans):
        assert r.commands[:4] == ins.commands[:4] and r.observations[:5] == ins.observations[:5]
        assert r.completion_ids[:a].count(tok.eos_token_id) == 4
        assert tok.decode(r.completion_ids[a:b]).replace(tok.eos_token, '') == r.commands[4]
    with pytest.raises(ValueError, match='pass a trie'):
        d.play_branched(model, tok, [('task_4_expert', 1)], [([], 0)], None)

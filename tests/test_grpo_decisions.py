"""`benchmarks/grpo_decisions.py`: GRPO on single decisions of a saved agent, scored before and after."""
import json, subprocess, sys
from pathlib import Path

import pytest

from dataenvgym.lm import save_agent, tiny_agent

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / 'benchmarks' / 'grpo_decisions.py'


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
    assert r.returncode != 0 and '--seeds takes START:COUNT' in r.stderr


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

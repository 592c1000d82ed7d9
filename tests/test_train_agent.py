"""`benchmarks/train_agent.py --config` reuses a finished phase only when the run folder's recipe is the same."""
import importlib.util, json
from pathlib import Path

import pytest

from dataenvgym.repair.train import TRAIN_CONFIGS, TrainConfig

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope='module')
def bench():
    spec = importlib.util.spec_from_file_location('train_agent', ROOT / 'benchmarks' / 'train_agent.py')
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod


def finished(out: Path, config: TrainConfig, grpo_steps: int) -> Path:
    "A run folder as the recipe leaves it: config, warm-up chats, saved models, the GRPO and rollout logs."
    config.dump(out / 'config.yaml')
    for phase in ('sft', 'grpo'): (out / phase).mkdir(parents=True); (out / phase / 'config.json').write_text('{}')
    (out / 'warmup.jsonl').write_text('{}\n{}\n')
    (out / 'logs').mkdir()
    rows = [{'step': s, 'reward': 0.1 * s, 'step_time': 2.0} for s in range(1, grpo_steps + 1)]
    (out / 'logs' / 'grpo.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows))
    (out / 'logs' / 'rollouts.jsonl').write_text(json.dumps({'level': 1, 'env_seconds': 0.1}) + '\n')
    return out


def with_(config: TrainConfig, **changes) -> TrainConfig:
    return TrainConfig.model_validate({**config.model_dump(), **changes})


def test_same_recipe_reuses_both_phases_other_eval_seeds_too(bench, tmp_path):
    c = TRAIN_CONFIGS['tiny-expert']
    out = finished(tmp_path, c, c.grpo.steps)
    other_eval = with_(c, eval_seeds='40-59')
    assert bench.reusable(other_eval, out, 'sft') and bench.reusable(other_eval, out, 'grpo')
    summary = bench.reused(out, 'grpo')
    assert summary['steps'] == c.grpo.steps and summary['level'] == 1 and summary['reused']
    assert bench.reused(out, 'sft')['chats'] == 2
    assert bench._grpo_seconds(out) == 2.0 * c.grpo.steps


def test_changed_grpo_keeps_sft_only_changed_sft_keeps_nothing(bench, tmp_path):
    c = TRAIN_CONFIGS['tiny-expert']
    out = finished(tmp_path, c, c.grpo.steps)
    more_steps = with_(c, grpo={**c.grpo.model_dump(), 'steps': c.grpo.steps + 1})
    assert bench.reusable(more_steps, out, 'sft') and not bench.reusable(more_steps, out, 'grpo')
    other_warmup = with_(c, warmup_seeds='3000-3039')
    assert not bench.reusable(other_warmup, out, 'sft')


def test_an_unfinished_grpo_is_not_reused(bench, tmp_path):
    c = TRAIN_CONFIGS['tiny-expert']
    out = finished(tmp_path, c, c.grpo.steps - 1)       # stopped one step short
    assert bench.reusable(c, out, 'sft') and not bench.reusable(c, out, 'grpo')
    (out / 'sft' / 'config.json').unlink()
    assert not bench.reusable(c, out, 'sft')


def test_compact_result_keeps_the_checked_keys_and_the_divergence(bench):
    "`--json`: per task trained, SFT, GRPO - SFT in points and the baselines; `divergence` passed through from `run_eval`."
    agents = {'trained': {'success': 0.3}, 'sft': {'success': 0.2}, 'inspector': {'success': 0.9}}
    div = {'task_4_expert': {'reference': 'inspector', 'failures': 7, 'left_path': 7, 'turns': {'12': 7},
                             'choices': [{'reference_command': 'apply 3', 'command': 'apply 1', 'n': 7}]}}
    res = {'eval': {'tasks': {'task_4_expert': {'agents': agents}}, 'commands': {},
                    'grpo_vs_sft': {'task_4_expert': {'success_diff': 0.1, 'success_diff_ci': [0.0, 0.2]}},
                    'divergence': div},
           'grpo': {'reward': [0.1], 'level': 1}, 'sft': {'chats': 3}, 'timing': {},
           'config': {'warmup_agents': ['inspector']}}
    out = bench.compact(res)['tasks']['task_4_expert']
    assert out == {'trained': {'success': 0.3}, 'sft': {'success': 0.2},
                   'demonstrator': {'agent': 'inspector', 'success': 0.9},
                   'grpo_minus_sft': {'mean': 10.0, 'lo': 0.0, 'hi': 20.0},
                   'baselines': {'inspector': {'success': 0.9}}}
    assert bench.compact(res)['divergence'] == div and 'decision' not in bench.compact(res)


def test_compact_result_with_the_control_and_a_decision(bench):
    "`--control-sft`: the control's success and GRPO minus it; a recipe's `decision`: GRPO's trace and the held-out choices."
    agents = {'trained': {'success': 0.9}, 'sft': {'success': 0.1}, 'hedger': {'success': 0.5},
              'more-sft': {'success': 0.15}}
    decision = {'task_1_easy': {'trained': {'impute': 0.9, 'drop': 0.1, 'neither': 0.0}}}
    res = {'eval': {'tasks': {'task_1_easy': {'agents': agents}}, 'commands': {}, 'decision': decision,
                    'grpo_vs_sft': {'task_1_easy': {'success_diff': 0.8, 'success_diff_ci': [0.7, 0.9]}}},
           'more_sft': {'task_1_easy': {'success_diff': 0.75, 'success_diff_ci': [0.6, 0.85]}},
           'grpo': {'reward': [0.1], 'level': None, 'decision': {'impute': [0.3, 0.9]}}, 'sft': {'chats': 3},
           'timing': {}, 'config': {'warmup_agents': ['hedger']}}
    out = bench.compact(res)
    task = out['tasks']['task_1_easy']
    assert task['demonstrator'] == {'agent': 'hedger', 'success': 0.5} and task['more_sft'] == {'success': 0.15}
    assert task['grpo_minus_more_sft'] == {'mean': 75.0, 'lo': 60.0, 'hi': 85.0}
    assert 'more-sft' not in task['baselines'] and 'hedger' in task['baselines']
    assert out['decision'] == {'grpo_steps': {'impute': [0.3, 0.9]}, 'held_out': decision}


@pytest.mark.parametrize('seeds, phase', [('1000:40', 'calibration 1000-1039'), ('2300:10', 'grpo 2200-2799'),
                                          ('2000:5', 'warmup 2000-2199')])
def test_cpu_grpo_refuses_seeds_it_trained_or_calibrated_on(bench, seeds, phase):
    with pytest.raises(SystemExit) as e: bench.config_for('cpu-grpo', 2, seeds)
    assert str(e.value) == (f'cpu-grpo: evaluation seeds {seeds.replace(":", "-").split("-")[0]}-'
                            f'{int(seeds.split(":")[0]) + int(seeds.split(":")[1]) - 1} overlap seeds this recipe '
                            f'trained or calibrated on: {phase}; evaluate on held-out seeds')

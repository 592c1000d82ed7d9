"""`benchmarks/teacher_grpo.py` as the checks run it, on the `tiny` setup at smoke size: one JSON object with the
documented keys, a finished run reused, and evaluation seeds from training or calibration refused."""
import json, os, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
SMOKE = ['--setup', 'tiny', '--train-seeds', '1000-1001', '--grpo-steps', '2', '--sft-steps', '20', '--threads', '1']
KEYS = ('grpo_minus_sft', 'grpo_minus_best_fixed', 'grpo_minus_with_state', 'grpo_minus_no_state',
        'oracle_minus_best_fixed')


def teacher_grpo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / 'benchmarks' / 'teacher_grpo.py'), *args], capture_output=True,
                          text=True, timeout=900, cwd=ROOT, env={**os.environ, 'HF_HUB_OFFLINE': '1'})


def test_trains_evaluates_and_prints_the_documented_json(tmp_path):
    run = teacher_grpo(*SMOKE, '--eval-seeds', '0-1', '--out', str(tmp_path), '--json')
    assert run.returncode == 0, run.stderr[-3000:]
    res = json.loads(run.stdout.strip().splitlines()[-1])
    for key in KEYS:
        assert set(res[key]) >= {'mean', 'lo', 'hi'} and res[key]['n'] == 2, (key, res[key])
    assert res['n_seeds'] == 2 and res['setup'] == 'tiny'
    rows = [json.loads(line) for line in (tmp_path / 'eval.jsonl').read_text().splitlines()]
    oracle = {r['seed']: r['test_gain_points'] for r in rows if r['policy'] == 'oracle'}
    fixed = [r for r in rows if r['policy'].startswith('fixed:')]
    assert len(oracle) == 2 and all(r['test_gain_points'] <= oracle[r['seed']] for r in fixed)
    # the finished run is reused (no training again), evaluated on other held-out seeds
    again = teacher_grpo('--eval-seeds', '2', '--out', str(tmp_path), '--json', '--no-oracle', '--threads', '1')
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout.strip().splitlines()[-1])['n_seeds'] == 1
    assert json.loads((tmp_path / 'run.json').read_text())['settings']['setup'] == 'tiny'


@pytest.mark.parametrize('seeds', ['1000-1001', '1050'])
def test_training_and_calibration_seeds_are_refused(tmp_path, seeds):
    run = teacher_grpo(*SMOKE, '--eval-seeds', seeds, '--out', str(tmp_path), '--json')
    assert run.returncode != 0 and 'used in training or calibration' in run.stderr
    assert not (tmp_path / 'run.json').exists()

"""Per-seed test gains of every policy of one `allocation_bound.py` run folder, the per-seed oracle over its fixed
plans, and the oracle's paired differences (bootstrap 95% CIs), for runs stopped before the benchmark's own summary.

    python experiments/teacher-reads-student/summarize.py RUNS/math-profiles-h/skill-list 1000-1009 [OUT.json [NOTE]]

A policy is left out unless it finished on every seed given.
"""
import json, sys
from pathlib import Path

from dataenvgym.stats import difference_interval, paired_difference, parse_seeds


def gain(folder: Path, seed: int) -> float | None:
    "The test gain (points) of the episode in `folder/seed{seed}`, None if it did not finish."
    f = folder / f'seed{seed}' / 'result.jsonl'
    if not f.exists(): return None
    r = [json.loads(line) for line in f.read_text().splitlines() if line.strip()][-1]
    return round(100 * (r['test_accuracy_best'] - r['test_accuracy_initial']), 2)


def diff(a: list[float], b: list[float]) -> dict:
    "`a` − `b`, paired by position: {mean, lo, hi, n}."
    rows = lambda v: [{'seed': i, 'v': x} for i, x in enumerate(v)]
    return difference_interval(paired_difference(rows(a), rows(b), 'v'))


if __name__ == '__main__':
    root, seeds = Path(sys.argv[1]), parse_seeds(sys.argv[2])
    gains = {p.name: [gain(p, s) for s in seeds] for p in sorted(root.iterdir())}
    gains = {p: v for p, v in gains.items() if None not in v}
    fixed = [p for p in gains if p.startswith('fixed:')]
    oracle = [max(gains[p][i] for p in fixed) for i in range(len(seeds))]
    mean = lambda v: round(sum(v) / len(v), 2)
    best = max(fixed, key=lambda p: mean(gains[p]))
    result = {'seeds': seeds, 'mean_gain': {p: mean(v) for p, v in gains.items()} | {'oracle': mean(oracle)},
              'gains': gains, 'oracle': oracle, 'best_fixed': best,
              'oracle_minus_best_fixed': diff(oracle, gains[best]),
              'oracle_minus_with_state': diff(oracle, gains['with-state']) if 'with-state' in gains else None,
              'note': sys.argv[4] if len(sys.argv) > 4 else ''}
    print(json.dumps(result, indent=1))
    if len(sys.argv) > 3: Path(sys.argv[3]).write_text(json.dumps(result, indent=1) + '\n')

"""Per-seed test gains of every policy of one `allocation_bound.py` run folder, the per-seed oracle over its fixed
plans, and the oracle's paired differences (bootstrap 95% CIs), for runs stopped before the benchmark's own summary.

    python experiments/teacher-reads-student/summarize.py RUNS/math-profiles-h/skill-list 1000-1009 [OUT.json [NOTE]]

A policy is left out unless it finished on every seed given. The reading, the oracle and the differences are
`allocation_bound.py`'s own.
"""
import json, runpy, sys
from pathlib import Path

from dataenvgym.stats import parse_seeds

bound = runpy.run_path(str(Path(__file__).parents[2] / 'benchmarks' / 'allocation_bound.py'))

if __name__ == '__main__':
    root, seeds = Path(sys.argv[1]), parse_seeds(sys.argv[2])
    gains = {p.name: [bound['finished_gain'](p / f'seed{s}') for s in seeds] for p in sorted(root.iterdir())}
    gains = {p: v for p, v in gains.items() if None not in v}
    oracle, _ = bound['oracle'](gains)
    mean = lambda v: round(sum(v) / len(v), 2)
    best = max((p for p in gains if p.startswith('fixed:')), key=lambda p: mean(gains[p]))
    result = {'seeds': seeds, 'mean_gain': {p: mean(v) for p, v in gains.items()} | {'oracle': mean(oracle)},
              'gains': gains, 'oracle': oracle, 'best_fixed': best,
              'oracle_minus_best_fixed': bound['difference'](oracle, gains[best], seeds),
              'oracle_minus_with_state': (bound['difference'](oracle, gains['with-state'], seeds)
                                          if 'with-state' in gains else None),
              'note': sys.argv[4] if len(sys.argv) > 4 else ''}
    print(json.dumps(result, indent=1))
    if len(sys.argv) > 3: Path(sys.argv[3]).write_text(json.dumps(result, indent=1) + '\n')

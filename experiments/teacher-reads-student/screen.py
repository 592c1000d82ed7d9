"""Screen a variant of `math/profiles` on a few seeds and plans: per episode the test gain, the iteration kept and
the per-skill validation accuracy after each iteration (what `allocation_bound.py` does not print).

    python experiments/teacher-reads-student/screen.py NAME '{"settings": {"hidden_size": 128}, "seed_per_subskill":
        [{"add_2digit": 0, "sub_2digit": 3000}]}' --seeds 1000 --plans '{"addition": 1}' --out DIR

The JSON overrides fields of the preset's `TeachingConfig`, and `subskills`, `settings` (the student's) and `base` (the
preset to start from, `math/profiles` by default) as `variant.py` does. Episodes are kept under DIR as
`allocation_bound.py` keeps them (the same folders), so a screen's episodes count in a later calibration run.
"""
import argparse, json, runpy
from pathlib import Path

from dataenvgym.core import read_jsonl
from dataenvgym.stats import parse_seeds
from dataenvgym.teaching.policies import FixedPlan
from dataenvgym.teaching.runner import EpisodeResult

HERE = Path(__file__).parent
bound = runpy.run_path(str(HERE.parents[1] / 'benchmarks' / 'allocation_bound.py'))
register_variant = runpy.run_path(str(HERE / 'variant.py'))['register_variant']


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('name'); p.add_argument('overrides')
    p.add_argument('--seeds', nargs='+', required=True)
    p.add_argument('--plans', nargs='+', required=True, help="fixed plans as JSON {skill: weight}, or 'with-state' or 'no-state'")
    p.add_argument('--out', required=True)
    a = p.parse_args()
    preset, out = register_variant(a.name, json.loads(a.overrides)), Path(a.out)
    for s in parse_seeds(a.seeds):
        for plan in a.plans:
            policy = plan if plan in ('with-state', 'no-state') else FixedPlan(json.loads(plan))
            label = plan if isinstance(policy, str) else bound['plan_label'](json.loads(plan))
            gain = bound['episode'](preset, policy, label, s, out)
            res = read_jsonl(bound['run_folder'](out, preset, 'skill-list', label, s) / 'result.jsonl', EpisodeResult)[0]
            hist = ' -> '.join('/'.join(f'{h[k]:.2f}' for k in sorted(h)) for h in res.skill_history)
            print(json.dumps({'seed': s, 'plan': label, 'gain': gain, 'kept': res.best_iteration,
                              'skills': sorted(res.skill_history[0]), 'val': hist}), flush=True)

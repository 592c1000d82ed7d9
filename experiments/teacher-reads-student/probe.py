"""Probe: which fixed plan is best for students with different seed data (one profile per run).

    python experiments/teacher-reads-student/probe.py --profile '{"add_2digit": 0, "sub_2digit": 300}' --seeds 1000-1001
"""
import argparse, json, time
from pathlib import Path

import torch
from dataenvgym.registry import make
from dataenvgym.stats import parse_seeds
from dataenvgym.teaching.envs import TeachingConfig
from dataenvgym.teaching.policies import FixedPlan
from dataenvgym.teaching.presets import Preset
from dataenvgym.teaching.runner import run_episode

SUBSKILLS = ['add_2digit', 'sub_2digit', 'mod_small', 'frac_add']


def preset(profile: dict, iterations: int, budget: int, fit_steps: int) -> Preset:
    return Preset(subskills=SUBSKILLS, settings=dict(hidden_size=64, layers=2, heads=4, intermediate_size=256),
                  config=TeachingConfig(iterations=iterations, from_base=False, replay=0.5, budget=budget,
                                        val_per_subskill=50, test_per_subskill=100,
                                        seed_per_subskill=profile, seed_fit={'steps': 3000},
                                        fit={'steps': fit_steps}))


if __name__ == '__main__':
    p = argparse.ArgumentParser()
    p.add_argument('--profile', required=True)
    p.add_argument('--seeds', default='1000-1001')
    p.add_argument('--plans', nargs='*', default=None)
    p.add_argument('--iterations', type=int, default=2)
    p.add_argument('--budget', type=int, default=500)
    p.add_argument('--fit-steps', type=int, default=400)
    p.add_argument('--out', default='/tmp/w/probe')
    a = p.parse_args()
    torch.set_num_threads(1)
    profile = json.loads(a.profile)
    pre = preset(profile, a.iterations, a.budget, a.fit_steps)
    skills = ['addition', 'subtraction', 'modular_arithmetic', 'fractions']
    plans = [json.loads(s) for s in a.plans] if a.plans else [{s: 1} for s in skills]
    label = '_'.join(f'{k[:3]}{v}' for k, v in profile.items())
    for seed in parse_seeds(a.seeds):
        row = {'profile': profile, 'seed': seed}
        for name in ['with-state'] + [json.dumps(w) for w in plans]:
            t0 = time.perf_counter()
            env = make('skill-list', preset=pre, seed_cache=Path(a.out) / 'seeds')
            pol = make('policy:skill-list/with-state', domain=env.domain) if name == 'with-state' \
                else FixedPlan(json.loads(name))
            folder = Path(a.out) / label / f'{abs(hash(name)) % 10**8}' / f'seed{seed}'
            res = run_episode(env, pol, folder, seed, progress=False)
            row[name] = round(100 * res.test_gain, 1)
            row.setdefault('start', {k: round(v, 2) for k, v in env.state.skill_history[0].items()})
            row.setdefault('end:' + name, {k: round(v, 2) for k, v in env.state.skill_history[-1].items()})
            print(name, row[name], round(time.perf_counter() - t0, 1), 's', flush=True)
        print(json.dumps(row), flush=True)

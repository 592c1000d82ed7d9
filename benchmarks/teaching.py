"""Benchmark teachers with and without state at equal data budget, in each teaching environment.

For each seed, runs the registered `with-state` and `no-state` policies in the chosen environment on the chosen preset
(both spend exactly the same number of examples per iteration, and both start from the same seed student, trained once
per seed and cached). Each run picks its best iteration on validation and tests it and iteration 0 once.

    python benchmarks/teaching.py --env skill-list --domain math --seeds 0 1 2 --iterations 3
    python benchmarks/teaching.py --env all --seeds 0 1 2
    python benchmarks/teaching.py --env skill-list --domain tools --seeds 0 1 2 --policies with-state

Prints one JSON object: per environment, `with_state_gain` and `no_state_gain` (mean test-accuracy gain over
iteration 0, in points; one `*_gain` per policy run), their difference `margin` (when both ran), and every run (initial, best-validation and test accuracy).
With `--domain vqa` it also reports `render_images_per_s`: 64-pixel scenes (levels 1-3) rendered per second, as the
engine renders the teacher's data.
Runs are kept under `--out` (default `runs/benchmark-teaching`), so an interrupted benchmark resumes where it stopped.
"""
import argparse, json, random, statistics, sys, time
from pathlib import Path

from dataenvgym.registry import registered
from dataenvgym.teaching.presets import teaching_setup
from dataenvgym.teaching.runner import run_episode

POLICIES = ('with-state', 'no-state')


def run(env_name: str, policy: str, seed: int, args) -> dict:
    "One episode; its numbers in points."
    env, teacher = teaching_setup(env_name, policy, args.preset, args.domain, iterations=args.iterations,
                                  seed_cache=Path(args.out) / 'seed-students')
    t0 = time.perf_counter()
    res = run_episode(env, teacher, Path(args.out) / f'{env_name}-{policy}-seed{seed}', seed, progress=False)
    print(f'{env_name} {policy} seed {seed}: test {res.test_accuracy_initial:.1%} → {res.test_accuracy_best:.1%} '
          f'(iteration {res.best_iteration}) in {time.perf_counter() - t0:.0f}s', file=sys.stderr, flush=True)
    return {'policy': policy, 'seed': seed, 'minutes': round((time.perf_counter() - t0) / 60, 1), 'best_iteration': res.best_iteration,
            'val_accuracy': [round(l.val_accuracy, 4) for l in res.iterations],
            'val_accuracy_best': round(res.val_accuracy_best, 4),
            'test_accuracy_initial': round(res.test_accuracy_initial, 4), 'test_accuracy_best': round(res.test_accuracy_best, 4),
            'test_gain_points': round(100 * res.test_gain, 2), 'test_per_skill_best': res.test_per_skill_best}


def render_rate(n: int = 300, size: int = 64, seed: int = 0) -> float:
    "VQA scenes rendered per second (levels 1-3 in turn), timed as `vqa_render.py` times them."
    from dataenvgym.domains.vqa import random_scene, render_scene
    from vqa_render import per_second
    scenes = [random_scene(random.Random(seed + k), k % 3 + 1) for k in range(n)]
    return per_second(lambda scene: render_scene(scene, size), scenes)['per_s']


def compare(env_name: str, args) -> dict:
    "With-state against no-state on every seed in one environment."
    runs = [run(env_name, p, s, args) for s in args.seeds for p in args.policies]
    gain = {p: round(statistics.mean(r['test_gain_points'] for r in runs if r['policy'] == p), 2) for p in args.policies}
    out = {f"{p.replace('-', '_')}_gain": g for p, g in gain.items()}
    if set(POLICIES) <= set(gain): out['margin'] = round(gain['with-state'] - gain['no-state'], 2)
    return {**out, 'runs': runs}


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--env', default='all', choices=['all', *registered('env')])
    p.add_argument('--domain', default='math')
    p.add_argument('--preset', default='embedded')
    p.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2])
    p.add_argument('--iterations', type=int, default=None)
    p.add_argument('--policies', nargs='+', default=list(POLICIES), help='registered teachers to run (default: with-state no-state)')
    p.add_argument('--out', default='runs/benchmark-teaching')
    a = p.parse_args()
    envs = registered('env') if a.env == 'all' else [a.env]
    t0 = time.perf_counter()
    results = {e: compare(e, a) for e in envs}
    out = results[envs[0]] if len(envs) == 1 else {'envs': results}
    if a.domain == 'vqa': out['render_images_per_s'] = render_rate()
    print(json.dumps({**out, 'env': a.env, 'domain': a.domain, 'preset': a.preset, 'seeds': a.seeds,
                      'minutes': round((time.perf_counter() - t0) / 60, 1)}))

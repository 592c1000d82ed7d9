"""Benchmark teachers with and without state at equal data budget, in each teaching environment: a thin wrapper over the sweep.

For each seed, runs the registered `with-state` and `no-state` policies in the chosen environment on the chosen preset
(both spend exactly the same number of examples per iteration, and both start from the same seed student, trained once
per seed and cached). Each run picks its best iteration on validation and tests it and iteration 0 once. The grid runs
through `dataenvgym.teaching.sweep.run_sweep` (what `dataenvgym sweep` runs), sequentially or on Ray.

    python benchmarks/teaching.py --env skill-list --domain math --seeds 0-9
    python benchmarks/teaching.py --env all --seeds 0 1 2 --backend ray
    python benchmarks/teaching.py --env skill-list --domain tools --seeds 0 1 2 --policies with-state

Prints one JSON object: per environment, `with_state_gain` and `no_state_gain` (mean test-accuracy gain over
iteration 0, in points; one `*_gain` per policy run) with `*_ci` (bootstrap 95% interval over the seeds), their paired
difference `margin` with `margin_ci` and `win_rate` (when both ran), and every run (initial, best-validation and test
accuracy). With `--domain vqa` it also reports `render_images_per_s`: 64-pixel scenes (levels 1-3) rendered per
second, as the engine renders the teacher's data. Runs are kept under `--out` (default `runs/benchmark-teaching`), so
an interrupted benchmark resumes where it stopped.
"""
import argparse, json, random, time

from dataenvgym.registry import registered
from dataenvgym.teaching.presets import preset_name
from dataenvgym.teaching.sweep import _make_spec, run_sweep

POLICIES = ('with-state', 'no-state')


def render_rate(n: int = 300, size: int = 64, seed: int = 0) -> float:
    "VQA scenes rendered per second (levels 1-3 in turn), timed as `vqa_render.py` times them."
    from dataenvgym.domains.vqa_scenes import random_scene, render_scene
    from vqa_render import per_second
    scenes = [random_scene(random.Random(seed + k), k % 3 + 1) for k in range(n)]
    return per_second(lambda scene: render_scene(scene, size), scenes)['per_s']


def _name(policy: str) -> str: return policy.replace('-', '_')


def compare(env: str, result) -> dict:
    "The with-state and no-state numbers of one environment of the sweep, in the benchmark's keys."
    out = {}
    for p in result.spec.policies:
        c = result.cell(p, env)
        out[f'{_name(p)}_gain'], out[f'{_name(p)}_ci'] = c['mean_gain'], c['ci']
    if set(POLICIES) <= set(result.spec.policies):
        pr = result.pair(*POLICIES, env)
        out.update(margin=pr['mean_diff'], margin_ci=pr['ci'], win_rate=pr['win_rate'])
    keep = ('policy', 'seed', 'best_iteration', 'val_accuracy', 'val_accuracy_best', 'test_accuracy_initial',
            'test_accuracy_best', 'test_gain_points', 'test_per_skill_best', 'seconds')
    return {**out, 'runs': [{k: r[k] for k in keep} for r in result.rows if r['env'] == env]}


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--env', default='all', choices=['all', *registered('env')])
    p.add_argument('--domain', default='math')
    p.add_argument('--preset', default='embedded')
    p.add_argument('--seeds', nargs='+', default=['0-2'], help='seeds: numbers or ranges like 0-9')
    p.add_argument('--iterations', type=int, default=None)
    p.add_argument('--policies', nargs='+', default=list(POLICIES), help='registered teachers to run (default: with-state no-state)')
    p.add_argument('--out', default='runs/benchmark-teaching')
    p.add_argument('--backend', default='sequential', choices=['sequential', 'ray'])
    p.add_argument('--address', default=None, help='a running Ray cluster (implies --backend ray)')
    p.add_argument('--cpus-per-episode', type=int, default=1)
    a = p.parse_args()
    envs = registered('env') if a.env == 'all' else [a.env]
    spec = _make_spec(presets=[preset_name(a.preset, a.domain)], envs=envs, policies=a.policies, seeds=a.seeds,
                     iterations=a.iterations)
    t0 = time.perf_counter()
    result = run_sweep(spec, a.out, backend=a.backend, address=a.address, cpus_per_episode=a.cpus_per_episode)
    results = {e: compare(e, result) for e in envs}
    out = results[envs[0]] if len(envs) == 1 else {'envs': results}
    if a.domain == 'vqa': out['render_images_per_s'] = render_rate()
    print(json.dumps({**out, 'env': a.env, 'domain': a.domain, 'preset': a.preset, 'seeds': spec.seeds,
                      'backend': result.backend, 'minutes': round((time.perf_counter() - t0) / 60, 1)}))

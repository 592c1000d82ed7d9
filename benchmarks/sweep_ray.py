"""The same sweep, one episode after another and as Ray tasks on this machine: equal numbers, and the wall-time ratio.

    python benchmarks/sweep_ray.py                                  # math/tiny, every environment, seeds 0-3
    python benchmarks/sweep_ray.py --preset math/undertrained-seed --envs skill-list --seeds 0-1

Both runs use one torch thread per episode (so their numbers can be equal); the sequential run keeps one core busy, the
Ray run one task per core. Each run starts from an empty folder (its seed students trained anew). Run it with nothing
else on the machine. Prints one JSON object: the seconds of each run (Ray's including its start-up), `speedup`
(sequential / Ray), and whether every episode's numbers agree.

Measured on this project's 2-core machine with nothing else running (2026-12-02), `--preset math/undertrained-seed --envs
skill-list --seeds 0-1` (4 episodes): sequential 254.0 s, Ray 138.3 s (7.8 s of it starting Ray), 1.84x; every
episode's numbers the same.
"""
import argparse, json, os, tempfile, time

from dataenvgym.teaching.sweep import _LOCAL_RAY, _make_spec, run_sweep

VOLATILE = ('ran', 'seconds', 'node')


def numbers(result) -> list[dict]: return [{k: v for k, v in r.items() if k not in VOLATILE} for r in result.rows]


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--preset', default='math/tiny')
    p.add_argument('--envs', nargs='+', default=['open-ended', 'skill-list', 'skill-tree'])
    p.add_argument('--seeds', default='0-3')
    p.add_argument('--iterations', type=int, default=None)
    a = p.parse_args()
    spec = _make_spec(presets=[a.preset], envs=a.envs, seeds=a.seeds, iterations=a.iterations)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter(); seq = run_sweep(spec, f'{d}/sequential', progress=False); t_seq = time.perf_counter() - t0
        os.environ.update(_LOCAL_RAY)
        import ray
        t0 = time.perf_counter()
        ray.init(include_dashboard=False, log_to_driver=False, logging_level='ERROR', num_cpus=os.cpu_count())
        t_start = time.perf_counter() - t0
        on_ray = run_sweep(spec, f'{d}/ray', backend='ray', progress=False); t_ray = time.perf_counter() - t0
        ray.shutdown()
    print(json.dumps({'preset': a.preset, 'envs': a.envs, 'seeds': spec.seeds, 'episodes': len(seq.rows), 'cpus': os.cpu_count(),
                      'sequential_s': round(t_seq, 1), 'ray_s': round(t_ray, 1), 'ray_start_s': round(t_start, 1),
                      'speedup': round(t_seq / t_ray, 2), 'same_numbers': numbers(seq) == numbers(on_ray)}))

"""Benchmark the VQA domain's offline image pipeline: scenes rendered per second, PNGs written per second, and tasks
(scene + question) generated per second, on one process.

For each image size and difficulty level it draws `--n` seeded random scenes and times:

- `render`: `render_scene` (PIL, drawn at 4x and downsampled), images per second;
- `render_png`: rendering plus writing the PNG file (what `save_images` does per new scene);
- `tasks`: `VQADomain.tasks` (scene sampling + question generation, no rendering), tasks per second;

and prints one JSON object, with the load average before and after (other processes slow everything down).

    python benchmarks/vqa_render.py
    python benchmarks/vqa_render.py --n 500 --sizes 64 96
"""
import argparse, json, os, platform, random, tempfile, time
from pathlib import Path

import PIL

from dataenvgym.domains.vqa import VQADomain
from dataenvgym.domains.vqa_scenes import random_scene, render_scene


def per_second(fn, items) -> dict:
    start = time.perf_counter()
    for x in items: fn(x)
    s = time.perf_counter() - start
    return {'n': len(items), 'seconds': round(s, 3), 'per_s': round(len(items) / s, 1)}


def main(n: int, sizes: list[int], seed: int) -> dict:
    load_before = os.getloadavg()
    out = {'benchmark': 'vqa_render', 'n_per_cell': n, 'seed': seed, 'cpu_count': os.cpu_count(),
           'python': platform.python_version(), 'pillow': PIL.__version__, 'render': {}, 'render_png': {}, 'tasks': {}}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            for level in (1, 2, 3):
                scenes = [random_scene(random.Random(seed + k), level) for k in range(n)]
                key = f'{size}px_level{level}'
                out['render'][key] = per_second(lambda s: render_scene(s, size), scenes)
                out['render_png'][key] = per_second(
                    lambda ks: render_scene(ks[1], size).save(Path(tmp) / f'{key}_{ks[0]}.png'), list(enumerate(scenes)))
        domain = VQADomain()
        for level in (1, 2, 3):
            start = time.perf_counter()
            domain.tasks(n, difficulty=level, seed=seed)
            s = time.perf_counter() - start
            out['tasks'][f'level{level}'] = {'n': n, 'seconds': round(s, 3), 'per_s': round(n / s, 1)}
    out['load_before'], out['load_after'] = [round(x, 2) for x in load_before], [round(x, 2) for x in os.getloadavg()]
    return out


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--n', type=int, default=300, help='scenes (and tasks) per size and level')
    p.add_argument('--sizes', type=int, nargs='+', default=[64, 96])
    p.add_argument('--seed', type=int, default=0)
    a = p.parse_args()
    print(json.dumps(main(a.n, a.sizes, a.seed), indent=1))

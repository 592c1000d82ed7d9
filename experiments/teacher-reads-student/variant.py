"""Run `benchmarks/allocation_bound.py` on a variant of `math/profiles`, registered for this process only.

    python experiments/teacher-reads-student/variant.py NAME '{"budget": 300, "seed_per_subskill": {...}}' -- \
        --seeds 1000-1009 --plans '{"addition": 1}' ... --out DIR

NAME becomes the preset `math/NAME`; the JSON overrides fields of the preset's `TeachingConfig`.
"""
import json, runpy, sys
from pathlib import Path

from dataenvgym.registry import lookup, register
from dataenvgym.teaching.envs import TeachingConfig

if __name__ == '__main__':
    name, overrides, rest = sys.argv[1], json.loads(sys.argv[2]), sys.argv[sys.argv.index('--') + 1:]
    base = lookup('preset', 'math/profiles')
    config = TeachingConfig.model_validate({**base.config.model_dump(), **overrides})
    register('preset', f'math/{name}', base.model_copy(update={'config': config}))
    sys.argv = ['allocation_bound.py', '--domain', 'math', '--preset', name, *rest]
    runpy.run_path(str(Path(__file__).parents[2] / 'benchmarks' / 'allocation_bound.py'), run_name='__main__')

"""Run `benchmarks/allocation_bound.py` on a variant of `math/profiles`, registered for this process only.

    python experiments/teacher-reads-student/variant.py NAME '{"budget": 300, "seed_per_subskill": {...}}' -- \
        --seeds 1000-1009 --plans '{"addition": 1}' ... --out DIR

NAME becomes the preset `DOMAIN/NAME`; the JSON overrides fields of the preset's `TeachingConfig` (and `subskills`, the
preset's own field, if given) of `math/profiles`, or of the preset named by its `base` key (`"base": "tools/embedded"`).
"""
import json, runpy, sys
from pathlib import Path

from dataenvgym.registry import lookup, register
from dataenvgym.teaching.envs import TeachingConfig

if __name__ == '__main__':
    name, overrides, rest = sys.argv[1], json.loads(sys.argv[2]), sys.argv[sys.argv.index('--') + 1:]
    base_name = overrides.pop('base', 'math/profiles')
    base, domain = lookup('preset', base_name), base_name.split('/')[0]
    subskills = overrides.pop('subskills', base.subskills)
    config = TeachingConfig.model_validate({**base.config.model_dump(), **overrides})
    register('preset', f'{domain}/{name}', base.model_copy(update={'config': config, 'subskills': subskills}))
    sys.argv = ['allocation_bound.py', '--domain', domain, '--preset', name, *rest]
    runpy.run_path(str(Path(__file__).parents[2] / 'benchmarks' / 'allocation_bound.py'), run_name='__main__')

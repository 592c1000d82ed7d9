"""Run `benchmarks/allocation_bound.py` on a variant of `math/profiles`, registered for this process only.

    python experiments/teacher-reads-student/variant.py NAME '{"budget": 300, "seed_per_subskill": {...}}' -- \
        --seeds 1000-1009 --plans '{"addition": 1}' ... --out DIR

NAME becomes the preset `DOMAIN/NAME`; the JSON overrides fields of the preset's `TeachingConfig` (and `subskills`,
the preset's own field, and `settings`, the student's, merged over the preset's, if given) of `math/profiles`, or of
the preset named by its `base` key (`"base": "tools/embedded"`).
"""
import json, runpy, sys
from pathlib import Path

from dataenvgym.registry import lookup, register
from dataenvgym.teaching.envs import TeachingConfig


def register_variant(name: str, overrides: dict) -> str:
    "Register `DOMAIN/NAME`, the base preset (`math/profiles` unless `overrides['base']`) with `overrides`; its key."
    overrides = dict(overrides)
    base_name = overrides.pop('base', 'math/profiles')
    base = lookup('preset', base_name)
    update = {'subskills': overrides.pop('subskills', base.subskills),
              'settings': {**base.settings, **overrides.pop('settings', {})}}
    update['config'] = TeachingConfig.model_validate({**base.config.model_dump(), **overrides})
    key = f'{base_name.split("/")[0]}/{name}'
    register('preset', key, base.model_copy(update=update))
    return key


if __name__ == '__main__':
    name, overrides, rest = sys.argv[1], json.loads(sys.argv[2]), sys.argv[sys.argv.index('--') + 1:]
    key = register_variant(name, overrides)
    sys.argv = ['allocation_bound.py', '--domain', key.split('/')[0], '--preset', name, *rest]
    runpy.run_path(str(Path(__file__).parents[2] / 'benchmarks' / 'allocation_bound.py'), run_name='__main__')

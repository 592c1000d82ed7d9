"`benchmarks/allocation_bound.py`: the fixed plans its upper bound searches, and the control with no teacher data."
import importlib.util
import json
from pathlib import Path

import pytest

from dataenvgym.registry import lookup
from dataenvgym.teaching.envs import SkillListObservation
from dataenvgym.teaching.policies import FixedPlan, FixedTreePlan

_spec = importlib.util.spec_from_file_location(
    'allocation_bound', Path(__file__).parents[1] / 'benchmarks' / 'allocation_bound.py')
bound = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bound)


def _obs(budget: int) -> SkillListObservation:
    per_skill = {'a': 0.1, 'b': 0.5, 'c': 0.9}
    return SkillListObservation(seed=0, iteration=0, budget=budget, val_accuracy=0.5, per_skill=per_skill,
                                history=[0.5], skill_history=[per_skill], errors_by_skill={})


def test_fixed_plan_spends_the_budget_in_its_proportions_whatever_the_state():
    action = FixedPlan({'a': 1, 'c': 3})(_obs(100))
    assert {p.skill: p.n for p in action.plans} == {'a': 25, 'c': 75}
    assert sum(p.n for p in FixedPlan({'b': 1})(_obs(7)).plans) == 7


def test_a_plan_naming_an_unknown_skill_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown skills \\['z'\\]"): FixedPlan({'z': 1})(_obs(10))


def test_default_plans_are_each_skill_each_pair_and_all_evenly():
    plans = bound.default_plans(['a', 'b', 'c'])
    assert len(plans) == 3 + 3 + 1 and plans[-1] == {'a': 1.0, 'b': 1.0, 'c': 1.0}
    assert bound.plan_label({'b': 1, 'a': 1, 'c': 0}) == 'fixed:a+b'
    assert bound.plan_label({'b': 3, 'a': 1}) == 'fixed:ax1+bx3' != bound.plan_label({'b': 1, 'a': 1})


def _tree_obs(budget: int):
    from dataenvgym.teaching.envs import SkillTreeObservation
    from dataenvgym.teaching.skills import SkillForest
    forest = SkillForest.from_skills({'attribute': [], 'counting': []}).explore(
        'attribute', ['color'], 10).explore('counting', ['count_all'], 10)
    return SkillTreeObservation(seed=0, iteration=0, budget=budget, val_accuracy=0.5, per_skill={}, history=[0.5],
                                skill_history=[{}], forest=forest)


TAXONOMY = {'attribute': ['color', 'shape', 'size', 'material'], 'counting': ['count_all']}


def test_fixed_tree_plan_explores_named_subskills_in_taxonomy_order_and_moves_the_rest():
    from dataenvgym.teaching.envs import Exploit, Explore
    action = FixedTreePlan({'size': 1, 'count_all': 2}, TAXONOMY)(_tree_obs(90))
    # color (there, unnamed) goes to 0; shape comes before size in the proposer's order, so it is explored at 0
    assert action.decisions == [Exploit(skill='attribute', deltas={'color': -10}),
                                Explore(skill='attribute', allocation=0), Explore(skill='attribute', allocation=30),
                                Exploit(skill='counting', deltas={'count_all': 50})]


def test_a_tree_plan_naming_an_unknown_subskill_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown subskills \\['weight'\\]"):
        FixedTreePlan({'weight': 1}, TAXONOMY)


def test_seed_data_only_trains_on_seed_data_alone_and_keeps_the_best_on_validation(tmp_path, monkeypatch):
    from dataenvgym.students.tiny import TinyLM
    fits, fit = [], TinyLM.fit
    def recording_fit(self, data, *args, **kwargs):
        fits.append((len(data), {d.source for d in data}, kwargs.get('from_base')))
        return fit(self, data, *args, **kwargs)
    monkeypatch.setattr(TinyLM, 'fit', recording_fit)
    gain = bound.seed_data_only('math/tiny', 0, tmp_path)
    # the seed student, then one fit an iteration on the same seed data, from base or not as the preset trains
    from_base = lookup('preset', 'math/tiny').config.from_base
    assert len(fits) == 3 and fits[1] == fits[2] == (fits[0][0], {'seed'}, from_base)
    folder = tmp_path / 'math-tiny' / 'skill-list' / 'seed-data-only' / 'seed0'
    record = json.loads((folder / 'result.json').read_text())
    assert len(record['val']) == len(record['test']) == 3                 # the start and math/tiny's two iterations
    best = record['best_iteration']
    assert record['val'][best] == max(record['val']) and best == record['val'].index(max(record['val']))
    assert gain == record['test_gain'] == round(100 * (record['test'][best] - record['test'][0]), 2)
    monkeypatch.setattr(bound, 'make', lambda *a, **k: pytest.fail('read back, not rerun'))
    assert bound.seed_data_only('math/tiny', 0, tmp_path) == gain


def test_the_oracle_takes_each_seeds_best_fixed_plan_and_is_compared_paired():
    runs = {'with-state': [1.0, 2.0, 3.0], 'fixed:a': [5.0, 0.0, 1.0], 'fixed:b': [1.0, 4.0, 2.0]}
    gains, plans = bound.oracle(runs)
    assert gains == [5.0, 4.0, 2.0] and plans == ['fixed:a', 'fixed:b', 'fixed:b']
    d = bound.difference(gains, runs['with-state'], [1000, 1001, 1002])
    assert d['n'] == 3 and d['mean'] == 1.67 and d['lo'] <= d['mean'] <= d['hi']

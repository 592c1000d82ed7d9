"`benchmarks/allocation_bound.py`: the fixed plans its upper bound searches, checked without training anything."
import importlib.util
from pathlib import Path

import pytest

from dataenvgym.teaching.envs import SkillListObservation

_spec = importlib.util.spec_from_file_location(
    'allocation_bound', Path(__file__).parents[1] / 'benchmarks' / 'allocation_bound.py')
bound = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bound)


def _obs(budget: int) -> SkillListObservation:
    per_skill = {'a': 0.1, 'b': 0.5, 'c': 0.9}
    return SkillListObservation(seed=0, iteration=0, budget=budget, val_accuracy=0.5, per_skill=per_skill,
                                history=[0.5], skill_history=[per_skill], errors_by_skill={})


def test_fixed_plan_spends_the_budget_in_its_proportions_whatever_the_state():
    action = bound.FixedPlan({'a': 1, 'c': 3})(_obs(100))
    assert {p.skill: p.n for p in action.plans} == {'a': 25, 'c': 75}
    assert sum(p.n for p in bound.FixedPlan({'b': 1})(_obs(7)).plans) == 7


def test_a_plan_naming_an_unknown_skill_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown skills \\['z'\\]"): bound.FixedPlan({'z': 1})(_obs(10))


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
    action = bound.FixedTreePlan({'size': 1, 'count_all': 2}, TAXONOMY)(_tree_obs(90))
    # color (there, unnamed) goes to 0; shape comes before size in the proposer's order, so it is explored at 0
    assert action.decisions == [Exploit(skill='attribute', deltas={'color': -10}),
                                Explore(skill='attribute', allocation=0), Explore(skill='attribute', allocation=30),
                                Exploit(skill='counting', deltas={'count_all': 50})]


def test_a_tree_plan_naming_an_unknown_subskill_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown subskills \\['weight'\\]"):
        bound.FixedTreePlan({'weight': 1}, TAXONOMY)

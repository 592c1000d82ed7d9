"""Property tests for the skill forest (exploit is all-or-nothing and clamps at zero) and for skill discovery."""
import string

import pytest
from hypothesis import given, settings, strategies as st

from dataenvgym.domains.math import MathDomain
from dataenvgym.teaching.skills import ClusterDiscoverer, OracleDiscoverer, SkillForest

names = st.text(string.ascii_lowercase, min_size=1, max_size=3)
forests = st.builds(SkillForest.from_skills,
                    st.dictionaries(names, st.lists(names, max_size=4, unique=True), max_size=4),
                    st.integers(0, 50))
deltas = st.one_of(st.integers(-100, 100), st.integers(-10**30, 10**30))


@st.composite
def forest_and_deltas(draw):
    "A forest and a delta mapping that mostly names its skills and subskills, sometimes unknown ones."
    forest = draw(forests)
    skill_names = st.sampled_from(list(forest.skills)) | names if forest.skills else names
    mapping = {}
    for skill in draw(st.lists(skill_names, max_size=4, unique=True)):
        subs = forest.subskills(skill) if skill in forest.skills else []
        sub_names = st.sampled_from(subs) | names if subs else names
        mapping[skill] = draw(st.dictionaries(sub_names, deltas, max_size=4))
    return forest, mapping


@settings(max_examples=300, deadline=None)
@given(forest_and_deltas())
def test_exploit_is_all_or_nothing_and_clamps(case):
    forest, mapping = case
    before, old = forest.to_json(), forest.allocations()
    try: new = forest.exploit(mapping)
    except ValueError:
        assert forest.to_json() == before
        assert any(s not in forest.skills or any(n not in forest.skills[s].subskills for n in subs)
                   for s, subs in mapping.items())
        return
    assert forest.to_json() == before
    want = {s: {n: max(0, a + mapping.get(s, {}).get(n, 0)) for n, a in subs.items()} for s, subs in old.items()}
    assert new.allocations() == want
    assert all(a >= 0 for subs in new.allocations().values() for a in subs.values())
    assert SkillForest.from_json(new.to_json()) == new


@settings(max_examples=100, deadline=None)
@given(forests, st.integers(0, 20))
def test_forest_json_roundtrip(forest, alloc):
    skill = next(iter(forest.skills), None)
    if skill is not None: forest = forest.explore(skill, ['zzzz'], alloc).with_validation({s: 0.5 for s in forest.skills})
    assert SkillForest.from_json(forest.to_json()) == forest
    assert SkillForest.from_json(forest.to_json()).to_json() == forest.to_json()


def _check_map(tasks, skill_map):
    assert set(skill_map.assignments) == {t.id for t in tasks}
    assert set(skill_map.assignments.values()) <= set(skill_map.skills)
    assert skill_map.assign(tasks) == [skill_map.assignments[t.id] for t in tasks]


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10**6), st.integers(60, 200), st.integers(2, 6))
def test_cluster_discovery_assigns_every_task_once_and_is_deterministic(seed, n, k):
    tasks = MathDomain.full().tasks(n, seed=seed)
    found = ClusterDiscoverer(k, seed=seed).discover(tasks)
    _check_map(tasks, found)
    assert len(found.skills) == k
    assert ClusterDiscoverer(k, seed=seed).discover(tasks) == found


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 100))
def test_oracle_discovery_assigns_every_task_once(seed, n):
    tasks = MathDomain.full().tasks(n, seed=seed)
    found = OracleDiscoverer().discover(tasks)
    _check_map(tasks, found)
    assert found.assign(tasks) == [t.skill for t in tasks]


def test_cluster_discovery_needs_enough_prompt_shapes():
    with pytest.raises(ValueError, match='needs at least 9 distinct prompt shapes'):
        ClusterDiscoverer(9).discover(MathDomain.full().tasks(5))

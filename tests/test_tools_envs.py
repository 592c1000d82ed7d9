"""The tool-use domain in all three teaching environments: an episode runs end to end, and the data the procedural
engine writes passes the domain's own grader (so quality checks reject nothing but duplicates and exam prompts)."""
import pytest

from dataenvgym.domains.tools import ToolDomain
from dataenvgym.registry import lookup, make
from dataenvgym.students.tiny import TinyLM
from dataenvgym.teaching.engines import ProceduralEngine
from dataenvgym.teaching.envs import TeachingConfig
from dataenvgym.teaching.policies import SampledSkillListTeacher
from dataenvgym.teaching.runner import run_episode

DOM = ToolDomain(['capital', 'capital+upper', 'population+mul'])
CONFIG = TeachingConfig(iterations=1, budget=30, seed_per_subskill=10, val_per_subskill=6, test_per_subskill=6,
                        seed_fit={'steps': 5}, fit={'steps': 5})


def small(seed):
    return TinyLM(seed=seed, hidden_size=32, layers=1, heads=2, intermediate_size=64, batch_size=8, warmup_steps=2,
                  max_length=256, max_new_tokens=100)


def make_env(name):
    "The environment class `name` with the same arguments as the others (the proposer defaults to the domain's taxonomy)."
    return lookup('env', name)(DOM, small, ProceduralEngine(DOM), CONFIG, initial_allocation=5)


@pytest.mark.parametrize('name', ['open-ended', 'skill-list', 'skill-tree'])
def test_episode_runs(name, tmp_path):
    res = run_episode(make_env(name), make(f'policy:{name}/with-state', domain=DOM), tmp_path, seed=0, progress=False)
    assert len(res.iterations) == 2 and res.iterations[1].added > 0
    assert set(res.iterations[1].rejected) <= {'duplicate', 'exam prompt'}
    assert set(res.test_per_skill_initial) == set(DOM.combos)


def test_sampled_teacher_in_skill_list(tmp_path):
    env = make_env('skill-list')
    obs = env.reset(seed=1)
    action = SampledSkillListTeacher(k=2)(obs)
    assert len(action.plans) == 2 and sum(p.n for p in action.plans) == CONFIG.budget
    assert env.step(action).error is None
    assert make('policy:skill-list/sampled').name == 'sampled'

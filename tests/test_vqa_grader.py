"""Property-based tests for the VQA domain: the grader never raises and gives no credit for hedging, the renderer and
the task sampler are deterministic per seed, and the engine's scenes keep the relations they were asked for."""
import io
import json
import random

from hypothesis import given, settings, strategies as st

from dataenvgym.core import Task
from dataenvgym.domains.vqa import VQADomain
from dataenvgym.domains.vqa_engine import SceneEngine
from dataenvgym.domains.vqa_grading import _NB_PAIRS, grade_vqa, naturalbench_read, naturalbench_scores, normalize_vqa, read_answer
from dataenvgym.domains.vqa_images import task_image
from dataenvgym.domains.vqa_questions import _QSUBSKILLS, YES_NO, _side
from dataenvgym.domains.vqa_scenes import VOCAB, random_scene, render_scene

DOMAIN = VQADomain()
TASKS = DOMAIN.tasks(len(_QSUBSKILLS) * 3, seed=11)  # every subskill at every level
NB_TASKS = [Task(domain='vqa', prompt=f'q{q}?Please answer Yes or No.', answer=a, skill='yes_no',
                 metadata={'benchmark': 'naturalbench', 'group': 0, 'pair': p, 'question_type': 'yes_no'})
            for p, q, a in zip(_NB_PAIRS, (0, 0, 1, 1), ('Yes', 'No', 'No', 'Yes'))]


@settings(max_examples=300, deadline=None)
@given(st.text(), st.integers(0, len(TASKS) - 1))
def test_any_response_grades_without_raising(response, k):
    for task in (TASKS[k], NB_TASKS[k % 4]):
        a = DOMAIN.grade(task, response)
        assert isinstance(a.correct, bool) and a.score in (0.0, 1.0)


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text(), st.none() | st.lists(st.text(), max_size=5))
def test_arbitrary_answers_and_options_never_raise(response, answer, options):
    ok, why = grade_vqa(response, answer, options)
    assert isinstance(ok, bool) and isinstance(why, str)
    assert naturalbench_read(response, 'yes_no') in (-1, 0, 1)
    assert naturalbench_read(response, 'multiple_choice') in (-1, 0, 1)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_normalize_is_idempotent(s):
    assert normalize_vqa(normalize_vqa(s)) == normalize_vqa(s)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(TASKS) - 1), st.sampled_from(['{}', 'The answer is {}.', '{}!', '  {}  ']))
def test_reference_right_and_other_options_wrong(k, template):
    t = TASKS[k]
    assert DOMAIN.grade(t, template.format(t.answer)).correct
    for o in t.metadata['options']:
        if o != t.answer:
            assert not DOMAIN.grade(t, template.format(o)).correct
            assert not DOMAIN.grade(t, f'{t.answer} or {o}').correct  # hedging between options earns nothing


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(VOCAB['color']), st.sampled_from(VOCAB['color']), st.sampled_from(['It is {}.', 'I think {}!', '{}, surely']))
def test_one_named_option_is_read_out_of_a_sentence(right, other, template):
    assert read_answer(template.format(right), VOCAB['color']) == right
    assert grade_vqa(template.format(other), right, VOCAB['color'])[0] == (other == right)
    assert grade_vqa(f'{right} or {other}', right, VOCAB['color'])[0] == (other == right)
    assert not grade_vqa(template.format(right), right)[0]  # an open question (no options) wants the answer itself


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 3]))
def test_renderer_is_deterministic_per_seed(seed, level):
    a, b = random_scene(random.Random(seed), level), random_scene(random.Random(seed), level)
    assert a == b
    img = render_scene(a)
    assert img.tobytes() == render_scene(json.loads(json.dumps(b))).tobytes()
    buf1, buf2 = io.BytesIO(), io.BytesIO()
    img.save(buf1, 'PNG'); render_scene(a).save(buf2, 'PNG')
    assert buf1.getvalue() == buf2.getvalue()
    other = random_scene(random.Random(seed + 1), level)
    assert other == a or render_scene(other).tobytes() != img.tobytes()


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_tasks_deterministic_and_images_match_scene(seed):
    t1, t2 = DOMAIN.tasks(5, seed=seed), DOMAIN.tasks(5, seed=seed)
    assert t1 == t2
    for t in t1:
        assert task_image(t).tobytes() == render_scene(t.metadata['scene']).tobytes()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(['left', 'right', 'above', 'below']), st.integers(0, 3))
def test_engine_scene_keeps_its_relation(seed, side, distractors):
    words = {'left': 'left of', 'right': 'to the right of', 'above': 'above', 'below': 'under'}[side]
    s = SceneEngine().scene(f'a red square {words} a blue circle', seed=seed, distractors=distractors)
    red, blue = s['objects'][:2]
    assert (red['color'], red['shape'], blue['color'], blue['shape']) == ('red', 'square', 'blue', 'circle')
    assert _side(red, blue, side) is True
    assert len(s['objects']) == 2 + distractors


def test_naturalbench_scores_chance_and_perfect():
    assert naturalbench_scores(NB_TASKS, ['yes'] * 4) == {'question': 0.0, 'image': 0.0, 'binary': 0.5, 'group': 0.0, 'groups': 1}
    assert naturalbench_scores(NB_TASKS, ['Yes.', 'No.', 'no', 'yes'])['group'] == 1.0
    assert all(DOMAIN.grade(t, r).correct for t, r in zip(NB_TASKS, ['Yes.', 'No.', 'no', 'yes']))
    assert set(YES_NO) == {'yes', 'no'}

"""Property-based and concurrency tests for the math grader and generator."""
import time
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

from hypothesis import given, settings, strategies as st

from dataenvgym.domains.math import EMBEDDED_SUBSKILLS, MathDomain, _grade_answer

ints = st.integers(-10**6, 10**6)


@settings(max_examples=200, deadline=None)
@given(ints, ints)
def test_integers_equal_only_to_themselves(a, b):
    assert _grade_answer(str(a), str(a))[0]
    assert _grade_answer(rf'\boxed{{{a}}}', str(a))[0]
    assert _grade_answer(str(b), str(a))[0] == (a == b)


@settings(max_examples=200, deadline=None)
@given(ints.filter(lambda a: abs(a) >= 10))
def test_no_substring_credit(a):
    s = str(a)
    assert not _grade_answer(s + '1', s)[0]
    assert not _grade_answer(s[:-1], s)[0]
    assert not _grade_answer(f'{s} or {a + 1}', s)[0]


@settings(max_examples=100, deadline=None)
@given(st.integers(-50, 50), st.integers(1, 20))
def test_fraction_spellings(p, q):
    f = Fraction(p, q)
    ref = str(f.numerator) if f.denominator == 1 else f'{f.numerator}/{f.denominator}'
    assert _grade_answer(rf'\frac{{{p}}}{{{q}}}', ref)[0]
    assert _grade_answer(f'{p * 3}/{q * 3}', ref)[0]


def test_hang_times_out_in_worker_threads():
    hang = (r'9^{9^{9^{9}}}+1', r'9^{9^{9^{9}}}')
    start = time.perf_counter()
    with ThreadPoolExecutor(2) as ex:
        verdicts = list(ex.map(lambda _: _grade_answer(*hang, timeout=1.0), range(2)))
    assert all(v == (False, 'wrong, timed out') for v in verdicts), verdicts
    assert time.perf_counter() - start < 5


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_generated_tasks_grade_correct_and_splits_disjoint(seed):
    dom = MathDomain()
    tasks = dom.tasks(25, seed=seed)
    assert {t.subskill for t in tasks} == set(EMBEDDED_SUBSKILLS)
    assert all(dom.grade(t, t.answer).correct for t in tasks)
    assert tasks == dom.tasks(25, seed=seed)
    sp = dom.splits(30, 20, 20, seed=seed)
    prompts = [{t.prompt for t in sp[k]} for k in ('train', 'val', 'test')]
    assert not (prompts[0] & prompts[1] or prompts[0] & prompts[2] or prompts[1] & prompts[2])

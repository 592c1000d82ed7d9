"""Property-based tests of the tool-use grader: no text, however malformed, makes it raise; right plans pass, wrong ones fail."""
import json, random

from hypothesis import given, settings, strategies as st

from dataenvgym.core import Attempt
from dataenvgym.domains.tool_grading import plan_metrics, score_plan
from dataenvgym.domains.tool_plans import Ref, fmt_plan, parse_plan, plan_answer
from dataenvgym.domains.tool_requests import ALL_COMBOS, STYLES, make_task, solve_request
from dataenvgym.domains.tools import ToolDomain

DOMAIN = ToolDomain.full()
TASKS = DOMAIN.tasks(300, seed=0)
METRIC_DOMAINS = [ToolDomain(metric=m) for m in ('tools', 'exact', 'execution')]

# text that looks like plans: names, brackets, quotes, references, separators, numbers, escapes
plan_alphabet = st.sampled_from(list('()[]{},=|;:$."\'\\-_ \n\t0123456789abcdefxyz<>') +
                                ['capital', 'upper', 'add', 'output0', '<node-0>', '$0', '$1.key', 'text=', '```json\n', '\u00e9', '\x00'])
plan_like = st.lists(plan_alphabet, max_size=80).map(''.join)
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
                           lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4),
                           max_leaves=20)
nodes = st.lists(st.fixed_dictionaries({'name': st.sampled_from(['capital', 'upper', 'add', 'Image Captioning', '', 3]),
                                        'args': json_values}), max_size=4)


def _graded(task, response):
    for d in METRIC_DOMAINS:
        a = d.grade(task, response)
        assert isinstance(a, Attempt) and a.feedback
    return a


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300), st.sampled_from(TASKS))
def test_arbitrary_text_never_raises(text, task):
    a = _graded(task, text)
    if a.correct: assert [c.name for c in parse_plan(text)] == task.skill.split('+')


@settings(max_examples=400, deadline=None)
@given(plan_like, st.sampled_from(TASKS))
def test_plan_like_text_never_raises(text, task):
    _graded(task, text)
    s = score_plan(text, task.answer)
    assert 0 <= s.args <= 1 and s.reason


@settings(max_examples=200, deadline=None)
@given(st.one_of(json_values, nodes, st.fixed_dictionaries({'plan': nodes})), st.sampled_from(TASKS))
def test_arbitrary_json_never_raises(value, task):
    _graded(task, json.dumps(value))


@settings(max_examples=200, deadline=None)
@given(plan_like, plan_like)
def test_arbitrary_reference_never_raises(response, reference):
    s = score_plan(response, reference)
    assert isinstance(s.tools, bool)


def test_deep_nesting_and_huge_numbers():
    task = TASKS[0]
    for text in ['[' * 5000, 'sort(items=' + '[' * 3000 + ')', '{"plan": ' * 2000, 'add(a=' + '9' * 30 + ', b=1)',
                 'mul(a=999999999999999999999999999999, b=999999999999999999999999999999)', 'add_days(date="2024-01-01", days=999999999999)',
                 'upper(text="\\N{nonsense}")', 'upper(text="\\x")']:
        _graded(task, text)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(ALL_COMBOS), st.sampled_from(STYLES), st.integers(1, 3), st.integers(0, 10**6))
def test_reference_plans_grade_correct_in_every_syntax(skill, style, level, seed):
    t = make_task(skill, style, level, random.Random(seed))
    calls = parse_plan(t.answer)
    as_json = json.dumps([{'id': i, 'name': c.name, 'args': {k: (f'<node-{v.index}>' if isinstance(v, Ref) else
                                                                    [float(x) for x in v] if isinstance(v, list) else
                                                                    float(v) if not isinstance(v, str) else v)
                                                                for k, v in c.args}} for i, c in enumerate(calls)])
    for text in (t.answer, t.answer.replace(' | ', '\n'), as_json):
        s = score_plan(text, t.answer)
        assert s.tools and s.args == 1 and s.execution, (text, s)
        assert all(d.grade(t, text).correct for d in METRIC_DOMAINS)
    assert plan_answer(calls) == t.metadata['final_answer']


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(TASKS), st.data())
def test_a_wrong_tool_is_never_a_correct_plan(task, data):
    calls = parse_plan(task.answer)
    i = data.draw(st.integers(0, len(calls) - 1))
    other = data.draw(st.sampled_from(sorted({'capital', 'upper', 'reverse', 'add', 'mul', 'max', 'weekday'} - {calls[i].name})))
    wrong = fmt_plan(calls[:i] + [type(calls[i])(other, calls[i].args)] + calls[i + 1:])
    assert not DOMAIN.grade(task, wrong).correct
    assert not ToolDomain(metric='exact').grade(task, wrong).correct


def test_metrics_on_a_mix():
    ts = TASKS[:4]
    m = plan_metrics(ts, [ts[0].answer, 'nonsense', ts[2].answer, ''])
    assert m['tools'] == 0.5 and m['exact'] == 0.5 and m['n'] == 4


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), plan_like, st.sampled_from(TASKS).map(lambda t: t.prompt[:-1] + ' 7?')))
def test_solve_never_raises(text):
    out = DOMAIN.solve(text)
    if out is not None:
        assert score_plan(out, out).exact and parse_plan(out)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(TASKS))
def test_solve_reads_the_generator(task):
    assert DOMAIN.solve(task.prompt) == task.answer


def test_the_domain_solves_with_the_request_reader():
    "`ToolDomain.solve` is `domains.tool_requests.solve_request`, so either reads a request the same way."
    for t in TASKS[:50]: assert DOMAIN.solve(t.prompt) == solve_request(t.prompt) == t.answer
    assert DOMAIN.solve('hello') is solve_request('hello') is None

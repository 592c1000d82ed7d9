"""Property-based tests for the core records: JSONL round-trips and stable ids."""
import string
from pathlib import Path

from hypothesis import given, settings, strategies as st

from dataenvgym.core import Attempt, Datum, EvalReport, Task, read_jsonl, write_jsonl

text = st.text(alphabet=string.printable + 'éß→½', max_size=40)
tasks = st.builds(Task, domain=st.sampled_from(['math', 'code']), prompt=text, answer=text,
                  skill=st.sampled_from(['a', 'b', 'c']), subskill=text, difficulty=st.integers(1, 5),
                  metadata=st.dictionaries(st.text(string.ascii_letters, min_size=1, max_size=5), st.integers()))
attempts = st.builds(Attempt, task=tasks, response=text, correct=st.booleans())


@settings(max_examples=60, deadline=None)
@given(st.lists(tasks, max_size=8))
def test_tasks_roundtrip(tmp_path_factory, ts):
    path = tmp_path_factory.mktemp('rt') / 'tasks.jsonl'
    write_jsonl(ts, path)
    assert read_jsonl(path, Task) == ts


@settings(max_examples=60, deadline=None)
@given(tasks)
def test_task_id_depends_on_content_only(t):
    again = Task(domain=t.domain, prompt=t.prompt, answer=t.answer, skill='other', difficulty=9)
    assert again.id == t.id
    assert Task.model_validate_json(t.to_json()) == t


@settings(max_examples=60, deadline=None)
@given(st.lists(attempts, min_size=1, max_size=20))
def test_report_accounts_for_every_attempt(ats):
    r = EvalReport.from_attempts(ats)
    assert r.n == len(ats) == sum(r.counts.values())
    assert len(r.failures) == sum(not a.correct for a in ats)
    assert 0 <= r.overall <= 1 and all(0 <= v <= 1 for v in r.per_skill.values())
    assert EvalReport.model_validate_json(r.to_json()) == r


@settings(max_examples=30, deadline=None)
@given(st.lists(st.builds(Datum, prompt=text, response=text, skill=text), max_size=8))
def test_data_roundtrip(tmp_path_factory, ds):
    path: Path = tmp_path_factory.mktemp('rt') / 'data.jsonl'
    write_jsonl(ds, path)
    assert read_jsonl(path, Datum) == ds

"""Every built-in domain and student keeps the `core.Domain` / `core.Student` contract (`check_domain`,
`check_student`), and the checks name every part that a user's domain or student lacks or breaks."""
import json
import random

import pytest

from dataenvgym.core import Attempt, ContractError, Datum, Domain, Student, Task, check_domain, check_student
from dataenvgym.domains.base import DomainBase
from dataenvgym.domains.code import CodeDomain
from dataenvgym.domains.math import MathDomain
from dataenvgym.domains.tools import ToolDomain
from dataenvgym.domains.vqa import VQADomain
from dataenvgym.students.hf import HFStudent
from dataenvgym.students.tiny import TinyLM
from dataenvgym.students.vqa import HFVisionStudent, VQAStudent, tiny_paligemma

DOMAINS = {'math': MathDomain, 'math-full': MathDomain.full, 'code': CodeDomain, 'tools': ToolDomain,
           'tools-sample': lambda: ToolDomain.sample(20, seed=1, metric='exact'), 'vqa': VQADomain}
TINY = dict(hidden_size=32, layers=1, heads=2, intermediate_size=64, batch_size=8)


@pytest.mark.parametrize('name', DOMAINS)
def test_builtin_domains_keep_the_contract(name):
    d = DOMAINS[name]()
    assert check_domain(d) is d
    assert isinstance(d, Domain) and isinstance(d, DomainBase)


@pytest.mark.parametrize('domain', [MathDomain(['add_2digit']), ToolDomain(['capital'])], ids=['math', 'tools'])
def test_tinylm_keeps_the_contract(domain):
    s = TinyLM(**TINY, **domain.student_settings)
    assert check_student(s, domain, steps=5) is s and isinstance(s, Student)
    assert s.get_params()['steps'] == 1000 and json.loads(json.dumps(s.get_params())) == s.get_params()


@pytest.mark.parametrize('network', ['film', 'objects'])
def test_vqa_student_keeps_the_contract(network):
    s = VQAStudent(network=network, batch_size=8)
    assert check_student(s, VQADomain(['color', 'count_all']), steps=5) is s


def test_hf_student_keeps_the_contract(tmp_path):
    adder = TinyLM(**TINY, steps=30).fit([Datum.from_task(t) for t in MathDomain(['add_2digit']).tasks(200)], progress=False)
    adder.model.save_pretrained(tmp_path / 'base'); adder.tokenizer.save_pretrained(tmp_path / 'base')
    s = HFStudent(tmp_path / 'base', batch_size=4, max_new_tokens=4)
    assert check_student(s, MathDomain(['sub_2digit']), steps=2) is s
    assert s.get_params()['model'] == str(tmp_path / 'base')


def test_hf_vision_student_keeps_the_contract(tmp_path):
    s = HFVisionStudent(tiny_paligemma(tmp_path / 'pg'), batch_size=4, predict_batch_size=4)
    assert check_student(s, VQADomain(['color']), steps=2) is s


class Partial:
    "A domain written from scratch with only what looks essential."
    name, subskills, skills = 'partial', ['a'], {'s': ['a']}
    def grade(self, task, response): return Attempt(task=task, response=response, correct=response == task.answer)


def test_an_incomplete_domain_is_told_every_missing_part():
    with pytest.raises(ContractError) as e: check_domain(Partial())
    msg = str(e.value)
    assert msg.startswith('Partial breaks the Domain contract (10 problems):')
    for part in ('tasks(n, *, skill=None', 'splits(n_train, n_val, n_test, *, seed=0)', 'grade_many', 'key(task)',
                 'datum(task', 'save_assets', 'load_assets', 'solve(prompt)', 'show(tasks', 'student_settings'):
        assert f'missing {part}' in msg, part
    assert 'subclass dataenvgym.domains.base.DomainBase for a default' in msg


class Flawed(DomainBase):
    "Tasks that change from run to run, mislabelled skills, and a grader that fails its own answers."
    name, subskills, skills = 'flawed', ['a', 'b'], {'s': ['a', 'b']}
    def _make(self, subskill, level, rng):
        x = random.randint(0, 10**9)                       # not from `rng`: different every time
        return Task(domain='flawed', prompt=f'{x}?', answer=str(x), skill='t', subskill=subskill, difficulty=level)
    def grade(self, task, response): return Attempt(task=task, response=response, correct=response == task.answer + '!')


def test_a_flawed_domain_is_told_every_broken_part():
    with pytest.raises(ContractError) as e: check_domain(Flawed())
    msg = str(e.value)
    assert 'tasks(6, seed=0) gave other tasks the second time' in msg
    assert 'which skills does not list' in msg
    assert 'is graded wrong' in msg and 'grade(task, task.answer) must be correct' in msg
    assert 'splits gave other tasks the second time' in msg


def test_domain_base_without_make_says_what_to_add():
    class Bare(DomainBase):
        name, subskills, skills = 'bare', ['a'], {'s': ['a']}
        def grade(self, task, response): return Attempt(task=task, response=response, correct=False)
    with pytest.raises(ContractError, match=r'Bare._make\(subskill, level, rng\) is missing'): check_domain(Bare())


class Leaky(TinyLM):
    "Lets per-fit settings stick."
    def fit(self, data, *, from_base=True, progress=True, **settings):
        self.config = self.config.model_copy(update=settings)
        return super().fit(data, from_base=from_base, progress=progress)


def test_a_flawed_student_is_told_what_breaks():
    with pytest.raises(ContractError) as e: check_student(Leaky(**TINY), steps=3)
    assert "get_params() changed after fit(**settings): per-fit settings must not stick" in str(e.value)
    uncounted = TinyLM(**TINY)
    del uncounted.examples_seen
    with pytest.raises(ContractError, match='missing examples_seen: int'): check_student(uncounted, steps=3)

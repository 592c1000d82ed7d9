"""HFVisionStudent on a tiny PaliGemma built offline: it learns a few answers, predicts one string per task, saves and
loads to the same predictions, keeps the checkpoint when given no data, and refuses unknown settings."""
import pytest
from peft import PeftModel

from dataenvgym.core import Student
from dataenvgym.domains.vqa import VQADomain
from dataenvgym.domains.vqa_images import vqa_datum
from dataenvgym.students.vqa import HFVisionStudent, tiny_paligemma

TASKS = VQADomain(['color', 'count_all']).tasks(8, seed=1)
DATA = [vqa_datum(t) for t in TASKS]


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    base = tiny_paligemma(tmp_path_factory.mktemp('pg') / 'tiny')
    student = HFVisionStudent(base, lr=1e-2, steps=80, batch_size=8, predict_batch_size=8)
    before = student.loss(DATA)
    return base, student.fit(DATA, progress=False), before


def test_fit_learns_the_answers(trained):
    _, student, before = trained
    assert isinstance(student, Student) and isinstance(student.model, PeftModel)
    assert student.loss(DATA) < before / 4
    preds = student.predict(TASKS)
    assert len(preds) == len(TASKS) and all(isinstance(p, str) for p in preds)
    assert sum(p == t.answer for p, t in zip(preds, TASKS)) >= 6, list(zip(preds, [t.answer for t in TASKS]))


def test_save_load_gives_the_same_predictions(trained, tmp_path):
    base, student, _ = trained
    again = HFVisionStudent.load(student.save(tmp_path / 's'))
    assert again.predict(TASKS) == student.predict(TASKS)
    assert again.config == student.config and again.name == str(base.resolve())


def test_no_data_keeps_the_checkpoint_as_it_is(trained, tmp_path):
    _, student, _ = trained
    again = HFVisionStudent.load(student.save(tmp_path / 's'))
    assert again.fit([], from_base=False, progress=False).predict(TASKS) == student.predict(TASKS)
    assert again.examples_seen == 0 and isinstance(again.model, PeftModel)
    assert not isinstance(again.fit([], progress=False).model, PeftModel)      # from the base: the adapter is dropped


def test_bad_input_is_a_clear_error(trained, tmp_path):
    _, student, _ = trained
    with pytest.raises(ValueError, match=r"unknown settings \['stepz'\]"): student.fit(DATA, stepz=3)
    with pytest.raises(FileNotFoundError, match='hfvisionstudent.json is missing'): HFVisionStudent.load(tmp_path)


def test_set_base_folds_the_adapter_in_and_save_load_rebuilds_it(trained, tmp_path):
    _, student, _ = trained
    based = HFVisionStudent.load(student.save(tmp_path / 's')).set_base()
    assert not isinstance(based.model, PeftModel) and len(based.base_adapters) == 1
    assert based.predict(TASKS) == student.predict(TASKS)
    assert HFVisionStudent.load(based.save(tmp_path / 'based')).predict(TASKS) == student.predict(TASKS)
    assert based.get_params()['model'] == student.get_params()['model'] and student.examples_seen == 80 * 8

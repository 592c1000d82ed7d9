"""The Colab T4 path, proven on a CPU: the three GPU tutorials run top to bottom, their GPU cells included.

`06_agent_sft`, `07_agent_grpo` and `10_train_a_teacher` run in that order on copies whose `#| eval: false` marks are
taken out (the docs build and `nbdev-test` leave those cells out); `#| slow` cells stay out, as in `nbdev-test`. The GPU
cells read the model from `DATAENVGYM_MODEL`, the run folder from `DATAENVGYM_RUNS`, and run at smoke size without a
GPU (`DATAENVGYM_QUICK`, `repair.train.smoke_config`): the same functions as on a T4 (load, LoRA through the trainer's
`peft_config`, SFT with gradient checkpointing, the adapter saved and reloaded trainable, GRPO with the environment in
the loop, evaluation), with a small model of Qwen's architecture. Given no model, the test makes one
(`testing.tiny_chat_model`); given one, it uses it as it is:

    DATAENVGYM_MODEL=FOLDER DATAENVGYM_RUNS=DIR python -m pytest -q tests/test_colab_path.py

Afterwards `DIR/qwen/sft` and `DIR/qwen/grpo` hold LoRA adapters whose base is that model, and only LoRA weights moved.
"""
import hashlib, json, os, re, shutil, uuid
from pathlib import Path

import pytest
from nbdev.test import test_nb as run_notebook  # aliased so pytest does not collect it as a test

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = [ROOT / 'nbs' / 'tutorials' / f'{n}.ipynb' for n in ('06_agent_sft', '07_agent_grpo', '10_train_a_teacher')]
EVAL_FALSE = re.compile(r'^\s*#\|\s*eval:\s*false\s*$\n?', re.M)


def with_gpu_cells(nb: Path) -> Path:
    "A copy of `nb` beside it (the same relative paths) whose GPU cells run: their `eval: false` marks taken out."
    data = json.loads(nb.read_text())
    for cell in data['cells']:
        if cell['cell_type'] == 'code':
            cell['source'] = EVAL_FALSE.sub('', ''.join(cell['source']))
    copy = nb.with_name(f'.colab-{uuid.uuid4().hex[:8]}-{nb.name}')
    copy.write_text(json.dumps(data))
    return copy


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope='module')
def model_folder(tmp_path_factory) -> Path:
    "`DATAENVGYM_MODEL` where it names a folder, else a tiny Qwen2 chat model made here."
    if os.environ.get('DATAENVGYM_MODEL'): return Path(os.environ['DATAENVGYM_MODEL']).resolve()
    from dataenvgym.testing import tiny_chat_model
    return tiny_chat_model(tmp_path_factory.mktemp('model') / 'tiny-qwen2')


def test_the_gpu_cells_marked_for_the_docs_are_the_ones_run():
    for nb in TUTORIALS:
        cells = [''.join(c['source']) for c in json.loads(nb.read_text())['cells'] if c['cell_type'] == 'code']
        assert sum(bool(EVAL_FALSE.search(c)) for c in cells) >= 3, nb.name
        copy = with_gpu_cells(nb)
        try: assert 'eval: false' not in copy.read_text()
        finally: copy.unlink()


def test_three_gpu_tutorials_run_on_the_cpu(model_folder, tmp_path, monkeypatch):
    from peft import AutoPeftModelForCausalLM
    from safetensors import safe_open
    from transformers import AutoModelForCausalLM
    runs = Path(os.environ.get('DATAENVGYM_RUNS') or tmp_path / 'runs').resolve()
    monkeypatch.setenv('DATAENVGYM_MODEL', str(model_folder))
    monkeypatch.setenv('DATAENVGYM_RUNS', str(runs))
    monkeypatch.setenv('DATAENVGYM_QUICK', '1')
    before = digests(model_folder)
    for nb in TUTORIALS:
        copy = with_gpu_cells(nb)
        try:
            ok, _ = run_notebook(copy, skip_flags=['slow'], basepath=ROOT)
            assert ok, f'{nb.name} failed with its GPU cells (see the traceback above)'
        finally: copy.unlink(missing_ok=True)
    assert digests(model_folder) == before                        # the base model was never written
    base = AutoModelForCausalLM.from_pretrained(model_folder).state_dict()
    for phase in ('sft', 'grpo'):
        folder = runs / 'qwen' / phase
        adapter = json.loads((folder / 'adapter_config.json').read_text())
        assert Path(adapter['base_model_name_or_path']).resolve() == model_folder, adapter
        with safe_open(folder / 'adapter_model.safetensors', 'pt') as f:
            saved = {k: f.get_tensor(k) for k in f.keys()}
        assert saved and all('lora_' in k for k in saved), sorted(saved)[:5]   # nothing but LoRA weights saved
        assert any(v.abs().sum() > 0 for k, v in saved.items() if 'lora_B' in k)  # B starts at zero: it trained
        loaded = AutoPeftModelForCausalLM.from_pretrained(folder)
        for name, p in loaded.get_base_model().named_parameters():
            if 'lora_' in name: continue
            key = re.sub(r'\.base_layer', '', name)
            assert (p == base[key]).all(), f'{phase}: {name} moved'
    assert (runs / 'qwen-teacher' / 'sft' / 'adapter_config.json').exists()


def test_the_plan_grammar_reads_a_qwen_size_vocabulary():
    "The teacher's plan grammar over a 150k-token vocabulary (Qwen's is 151,646): every plan it allows is a plan."
    from dataenvgym.testing import chat_corpus, chat_tokenizer
    from dataenvgym.teaching.train import PlanGrammar
    tok = chat_tokenizer(chat_corpus(1) + ['addition:30; subtraction:10'] * 20)
    tok.add_tokens([f'w{i:06d}' for i in range(150_000 - len(tok))])
    assert len(tok) >= 150_000
    grammar = PlanGrammar(tok, ['addition', 'subtraction'])
    text, target = '', 'addition:30; subtraction:10'
    while text != target:           # spell the plan with the longest allowed token that keeps to it
        ids = [i for i in grammar.allowed(text) if i != grammar.eos and target.startswith(text + tok.decode([i]))]
        assert ids, text
        text += max((tok.decode([i]) for i in ids), key=len)
    assert grammar.eos in grammar.allowed(text)
    assert not any(tok.decode([i]).startswith('w0') for i in grammar.allowed(''))    # the added words never fit


def test_the_device_script_runs_and_reports(model_folder, tmp_path, capsys):
    "`benchmarks/colab_t4.py`, the one short run for the day a GPU is lent, works here on the CPU path."
    import importlib.util
    spec = importlib.util.spec_from_file_location('colab_t4', ROOT / 'benchmarks' / 'colab_t4.py')
    colab_t4 = importlib.util.module_from_spec(spec); spec.loader.exec_module(colab_t4)
    report = colab_t4.main(['--model', str(model_folder), '--out', str(tmp_path), '--steps', '1', '--seeds', '2'])
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == report
    assert (report['device'], report['precision'], report['four_bit']) == ('cpu', 'fp32', False)
    assert len(report['reward_curve']) == 1 and {'sft', 'grpo', 'eval'} <= set(report)
    assert (tmp_path / 'qwen' / 'grpo' / 'adapter_config.json').exists()

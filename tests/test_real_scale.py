"""The paper's pipeline offline, in every domain and environment: `dataenvgym teach --config FILE` with a tiny Hugging Face
checkpoint made here, validation and test read from benchmark-format files written here (our own fixtures, in the
published formats of MATH, LiveCodeBench, m&m's and GQA), and the LLM modules answered by the package's scripted server.
Also: how often each domain's check of LLM-written data rejects correct and deliberately wrong items."""
import base64, contextlib, io, json, pickle, random, zlib
from pathlib import Path

import pytest
import yaml

from dataenvgym.cli import main
from dataenvgym.domains.code import CodeDomain
from dataenvgym.domains.math import MathDomain, load_math_jsonl
from dataenvgym.domains.tools import ToolDomain
from dataenvgym.domains.vqa import VQADomain, SceneItem
from dataenvgym.domains.vqa_scenes import VOCAB
from dataenvgym.registry import lookup
from dataenvgym.teaching.envs import DataSpec
from dataenvgym.teaching.llm import LLM, ScriptedServer
from dataenvgym.teaching.llm_modules import LLMEngine
from dataenvgym.testing import StandInTeacher

ENVS = ['open-ended', 'skill-list', 'skill-tree']


# --- fixtures in the published formats (invented problems) -------------------------------------------------------

def _math_rows(k: int, offset: int) -> list[dict]:
    "MATH problems `{problem, level, type, solution}`: linear equations and remainders, with boxed answers."
    rows = []
    for i in range(offset, offset + k):
        a, x, b = 2 + i % 5, 3 + i, 1 + 2 * i
        if i % 2:
            rows.append({'problem': f'If ${a}x + {b} = {a * x + b}$, what is the value of $x$?', 'level': f'Level {1 + i % 3}',
                         'type': 'Algebra', 'solution': f'Subtract ${b}$ and divide by ${a}$: $x = \\boxed{{{x}}}$.'})
        else:
            n, m = 40 + 7 * i, 3 + i % 4
            rows.append({'problem': f'What is the remainder when ${n}$ is divided by ${m}$?', 'level': f'Level {1 + i % 2}',
                         'type': 'Number Theory', 'solution': f'${n} = {m} \\cdot {n // m} + {n % m}$, so the remainder is $\\boxed{{{n % m}}}$.'})
    return rows


def _lcb_row(i: int) -> dict:
    "A LiveCodeBench row (every value a string; private tests base64 → zlib → a pickled JSON string)."
    functional = i % 2 == 0
    if functional:
        public = [{'input': f'[{i}, 2, 3]', 'output': str(i + 5), 'testtype': 'functional'}]
        private = [{'input': '[1, 1]', 'output': '2', 'testtype': 'functional'}]
        starter, meta = 'class Solution:\n    def total(self, nums: List[int]) -> int:\n        ', json.dumps({'func_name': 'total'})
    else:
        public = [{'input': f'{i} 4\n', 'output': f'{i * 4}\n', 'testtype': 'stdin'}]
        private = [{'input': '3 3\n', 'output': '9\n', 'testtype': 'stdin'}]
        starter, meta = '', '{}'
    packed = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(private)))).decode()
    return {'question_title': f'task-{i}', 'question_content': ('Return the sum of nums.' if functional else 'Print A times B.') + f' (#{i})',
            'platform': 'leetcode' if functional else 'atcoder', 'question_id': f'{9800 + i}', 'contest_id': f'c{i}',
            'contest_date': '2023-10-0{}T00:00:00'.format(1 + i % 9), 'starter_code': starter, 'difficulty': 'easy',
            'public_test_cases': json.dumps(public), 'private_test_cases': packed, 'metadata': meta}


def _mnms_row(i: int) -> dict:
    "An m&m's item: a quoted request and a plan_str of `{id, name, args}` nodes."
    city = ['Oslo', 'Lima', 'Quito', 'Hanoi', 'Accra', 'Perth', 'Turin', 'Cusco', 'Seoul', 'Dakar', 'Hobart', 'Graz',
            'Split', 'Kyoto', 'Porto', 'Bergen'][i % 16]
    if i % 2:
        plan = [{'id': 0, 'name': 'get location', 'args': {'city': city}},
                {'id': 1, 'name': 'get weather', 'args': {'lon': '<node-0>.lon', 'lat': '<node-0>.lat'}}]
        request = f'"What is the weather like in {city} this week?"'
    else:
        plan = [{'id': 0, 'name': 'image captioning', 'args': {'image': f'{7700 + i}.jpg'}},
                {'id': 1, 'name': 'text summarization', 'args': {'text': '<node-0>.text'}}]
        request = f'"Give me a one-line summary of what is in {7700 + i}.jpg"'
    return {'id': 7000 + i, 'user_request': request, 'plan_str': repr(plan), 'code_str': 'def solve():\n    return {}',
            'alt_plans_str': None}


def _gqa(i: int) -> tuple[str, dict]:
    "A GQA question `{questionId: question}` with its types, about image `i`."
    colour = ['red', 'blue', 'green', 'yellow'][i % 4]
    if i % 2:
        q = {'question': f'Is the ball {colour}?', 'answer': 'yes' if i % 4 == 1 else 'no',
             'types': {'structural': 'verify', 'semantic': 'attr', 'detailed': 'verifyAttr'}}
    else:
        q = {'question': 'What color is the cup on the table?', 'answer': colour,
             'types': {'structural': 'query', 'semantic': 'rel', 'detailed': 'relAttr'}}
    qid = f'0{8800000 + i}'
    return qid, {**q, 'imageId': f'{6600 + i}', 'isBalanced': True, 'fullAnswer': q['answer'], 'equivalent': [qid], 'entailed': [],
                 'semantic': [{'operation': 'select', 'dependencies': [], 'argument': 'ball (1)'}], 'semanticStr': 'select: ball',
                 'groups': {'global': None, 'local': 'x'}, 'annotations': {'question': {}, 'answer': {}, 'fullAnswer': {}}}


def _jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text(''.join(json.dumps(r) + '\n' for r in rows), encoding='utf-8')
    return str(path)


def benchmark_files(domain: str, root: Path) -> tuple[dict, list]:
    "The `domain:` section of a run config reading fixture files written under `root`, and the stand-in's bank."
    root.mkdir(parents=True, exist_ok=True)
    if domain == 'math':
        bank = load_math_jsonl(_jsonl(root / 'train.jsonl', _math_rows(12, 100)))
        return {'loader': 'math', 'val': _jsonl(root / 'val.jsonl', _math_rows(6, 0)),
                'test': _jsonl(root / 'test.jsonl', _math_rows(6, 50))}, bank
    if domain == 'code':
        return {'loader': 'livecodebench', 'val': _jsonl(root / 'test2.jsonl', [_lcb_row(i) for i in range(4)]),
                'test': _jsonl(root / 'test.jsonl', [_lcb_row(i) for i in range(10, 14)])}, []
    if domain == 'tools':
        return {'loader': 'mnms', 'val': _jsonl(root / 'val.json', [_mnms_row(i) for i in range(4)]),
                'test': _jsonl(root / 'test.json', [_mnms_row(i) for i in range(10, 14)])}, []
    from PIL import Image
    (images := root / 'images').mkdir(exist_ok=True)
    for i in list(range(4)) + list(range(10, 14)):
        Image.new('RGB', (32, 32), tuple(random.Random(i).randrange(256) for _ in range(3))).save(images / f'{6600 + i}.png')
    for name, ids in (('val', range(4)), ('testdev', range(10, 14))):
        (root / f'{name}_balanced_questions.json').write_text(json.dumps(dict(_gqa(i) for i in ids)))
    return {'loader': 'gqa', 'val': str(root / 'val_balanced_questions.json'), 'test': str(root / 'testdev_balanced_questions.json'),
            'images': str(images)}, []


# --- tiny checkpoints ---------------------------------------------------------------------------------------------

@pytest.fixture(scope='module')
def checkpoints(tmp_path_factory):
    "A tiny causal LM (a Llama config, character tokenizer) and a tiny PaliGemma, saved as Hugging Face checkpoints."
    from dataenvgym.students.tiny import TinyLM
    from dataenvgym.students.vqa import tiny_paligemma
    root = tmp_path_factory.mktemp('checkpoints')
    lm = TinyLM(hidden_size=32, layers=1, heads=2, intermediate_size=64)
    lm.model.save_pretrained(root / 'lm'); lm.tokenizer.save_pretrained(root / 'lm')
    return {'text': root / 'lm', 'vision': tiny_paligemma(root / 'pg')}


def run_config(domain: str, env: str, files: dict, checkpoints: dict, url: str) -> dict:
    "A run config for the CPU: the domain's fixture files, the tiny checkpoint with LoRA, the LLM teacher behind `url`."
    if domain == 'vqa':
        student = {'kind': 'hf-vision', 'model': str(checkpoints['vision']),
                   'settings': {'steps': 2, 'batch_size': 4, 'predict_batch_size': 8, 'max_new_tokens': 3}}
    else:
        student = {'kind': 'hf', 'model': str(checkpoints['text']),
                   'settings': {'steps': 2, 'batch_size': 4, 'predict_batch_size': 16, 'max_new_tokens': 8, 'max_length': 256,
                                'lr': 1e-3, 'device': 'cpu', 'dtype': 'float32'}}
    return {'env': env, 'preset': 'tiny', 'domain': {'name': domain, 'source': 'files', **files}, 'student': student,
            'teacher': {'policy': 'with-state', 'llm': {'model': 'stand-in', 'base_url': url}},
            'iterations': 1, 'budget': 6, 'seed_per_subskill': 0 if domain != 'vqa' else 1, 'fit': {'steps': 2}, 'seed_fit': {'steps': 2}}


def teach(*argv) -> tuple[int, dict | None, str]:
    "`dataenvgym teach ARGV --json` in this process: exit status, the JSON it printed, stderr."
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): code = main(['teach', *argv, '--json'])
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else None, err.getvalue()


FILE_SKILLS = {'math': {'Algebra', 'Number Theory'}, 'code': {'competitive_programming'}, 'vqa': {'attr', 'rel'},
               'tools': {'get_location+get_weather', 'image_captioning+text_summarization'}}


@pytest.mark.parametrize('env', ENVS)
@pytest.mark.parametrize('domain', ['math', 'code', 'tools', 'vqa'])
def test_teach_config_runs_the_paper_pipeline_offline(domain, env, checkpoints, tmp_path):
    files, bank = benchmark_files(domain, tmp_path / 'data')
    dom = lookup('preset', f'{domain}/tiny').make_domain()
    with ScriptedServer(StandInTeacher(dom, wrong_rate=0.2, bank=bank, seed=3)) as srv:
        (cfg := tmp_path / 'run.yaml').write_text(yaml.safe_dump(run_config(domain, env, files, checkpoints, srv.url)))
        code, res, err = teach('--config', str(cfg), '--out', str(tmp_path / 'run'))
    assert code == 0, err
    ran = json.loads((tmp_path / 'run' / 'run.json').read_text())
    assert ran['setup']['source']['loader'] == files['loader'] and ran['setup']['engine'] == 'llm'
    assert res['iterations'][-1]['n_data'] > 0                                   # accepted data
    assert set(res['test_per_skill_initial']) == FILE_SKILLS[domain]             # test from the files ...
    assert set(res['skill_history'][0]) == FILE_SKILLS[domain]                   # ... and validation too
    assert 0 <= res['test_accuracy_best'] <= 1 and 0 <= res['test_accuracy_last'] <= 1 and res['last_iteration'] == 1
    data = [json.loads(l) for l in (tmp_path / 'run' / 'iteration_1' / 'data.jsonl').read_text().splitlines()]
    assert data and all(d['source'] == 'llm' for d in data)
    if domain == 'vqa': assert all('scene' in d['metadata'] for d in data)   # the rendered scene travels with the datum
    check_run_folder(tmp_path / 'run', res, domain, srv)


def check_run_folder(out: Path, res: dict, domain: str, srv: ScriptedServer) -> None:
    "What ran is recorded (student, model, LLM endpoint, version; never a key), every rejection with its reason, the result in words."
    ran = json.loads((out / 'run.json').read_text())
    student, llm = ran['setup']['student'], ran['setup']['llm']
    assert student['kind'] == ('hf-vision' if domain == 'vqa' else 'hf') and Path(student['model']).is_dir()
    assert (llm['model'], llm['endpoint'], llm['api_key_env']) == ('stand-in', srv.url, 'OPENAI_API_KEY')
    assert ran['dataenvgym_version'] and 'sk-' not in json.dumps(ran)
    rejections = json.loads((out / 'rejections.json').read_text())
    assert rejections == res['rejections'] and set(rejections) == {'0', '1'}
    items = [r for r in rejections['1'] if r['reason'] != 'iteration skipped']
    assert len(items) == sum(res['iterations'][1]['rejected'].values()) and all(r['reason'] for r in items)
    summary = (out / 'summary.md').read_text()
    assert 'points' in summary and 'Test accuracy at the start (iteration 0)' in summary
    if res['best_iteration'] == 0: assert 'No iteration beat the start' in summary and 'Last iteration (1): test' in summary
    else: assert 'Best on validation: iteration 1, test' in summary
    if domain == 'tools':     # the engine is told the loaded benchmark's tools, not the built-in ones
        asked = [m['content'] for r in srv.requests for m in r['messages'] if 'gold plan' in m['content']]
        assert asked and all("get_location(city)" in a and 'capital:' not in a for a in asked)


@pytest.mark.parametrize('env', ['open-ended', 'skill-list', 'skill-tree'])
def test_the_llm_policy_teaches_benchmark_skills(env, checkpoints, tmp_path):
    "`--policy llm` in every environment, on the skills of benchmark files (LiveCodeBench's platforms)."
    files, _ = benchmark_files('code', tmp_path / 'data')
    with ScriptedServer(StandInTeacher(lookup('preset', 'code/tiny').make_domain(), seed=1)) as srv:
        (cfg := tmp_path / 'run.yaml').write_text(yaml.safe_dump(run_config('code', env, files, checkpoints, srv.url)))
        code, res, err = teach('--config', str(cfg), '--policy', 'llm', '--out', str(tmp_path / 'run'))
    assert code == 0, err
    assert 'policy' in {u['module'] for u in res['usage']} and res['iterations'][-1]['n_data'] > 0


def test_a_relative_checkpoint_resumes_from_another_folder(checkpoints, tmp_path, monkeypatch):
    "The student's checkpoint given as a relative path: the finished run is resumed (and re-tested) from another folder."
    import shutil
    files, bank = benchmark_files('math', tmp_path / 'data')
    shutil.copytree(checkpoints['text'], tmp_path / 'ckpt')
    (tmp_path / 'elsewhere').mkdir()
    with ScriptedServer(StandInTeacher(lookup('preset', 'math/tiny').make_domain(), bank=bank)) as srv:
        config = run_config('math', 'skill-list', files, {'text': Path('ckpt')}, srv.url)
        (cfg := tmp_path / 'run.yaml').write_text(yaml.safe_dump(config))
        monkeypatch.chdir(tmp_path)
        first = teach('--config', str(cfg), '--out', str(tmp_path / 'run'))
        monkeypatch.chdir(tmp_path / 'elsewhere')
        again = teach('--config', str(cfg), '--out', str(tmp_path / 'run'))
    assert first[0] == 0 and again[0] == 0, (first[2], again[2])
    assert again[1]['test_accuracy_best'] == first[1]['test_accuracy_best']


def test_the_console_script_and_a_wrong_teacher(checkpoints, tmp_path):
    """The installed `dataenvgym` runs a config file too. A teacher whose every item is wrong: the batch is asked again with
    the reasons, then the iteration is skipped with the reason recorded, the episode goes on, and the run fails loudly."""
    import subprocess
    files, bank = benchmark_files('math', tmp_path / 'data')
    dom = lookup('preset', 'math/tiny').make_domain()
    with ScriptedServer(StandInTeacher(dom, wrong_rate=1.0, bank=bank, solve_rate=1.0)) as srv:
        config = {**run_config('math', 'skill-list', files, checkpoints, srv.url), 'iterations': 2}
        (cfg := tmp_path / 'run.yaml').write_text(yaml.safe_dump(config))
        out = subprocess.run(['dataenvgym', 'teach', '--config', str(cfg), '--out', str(tmp_path / 'run')],
                             capture_output=True, text=True, timeout=300)
        retried = [m['content'] for r in srv.requests for m in r['messages'] if 'rejected by the checks' in m['content']]
    assert out.returncode == 1 and 'all rejected (independent solutions disagree' in out.stderr, out.stderr
    assert 'skipped: stand-in: nothing the LLM wrote' in out.stdout and 'iteration 2:' in out.stdout, out.stdout
    assert retried and 'independent solutions disagree' in retried[0]
    rejections = json.loads((tmp_path / 'run' / 'rejections.json').read_text())
    for it in ('1', '2'):
        assert rejections[it][-1]['reason'] == 'iteration skipped' and 'in 2 attempt(s)' in rejections[it][-1]['detail']
        assert {r['reason'] for r in rejections[it][:-1]} == {'independent solutions disagree'}


# --- every named config, and the checks a run makes before it spends anything ------------------------------------

def cpu_overrides(name: str, checkpoints: dict, root: Path) -> list[str]:
    "The flags that run named config `name` here: the domain's fixture files, the tiny checkpoint, the CPU."
    config = lookup('run-config', name)
    if config.domain.source != 'files': return []
    files, _ = benchmark_files(config.domain.name, root)
    model = checkpoints['vision' if config.domain.name == 'vqa' else 'text']
    return ['--student-model', str(model), '--set', 'student.settings.device=cpu', '--set', 'student.settings.dtype=float32',
            '--set', 'domain.split=files', *[a for k, v in files.items() if k != 'loader' for a in ('--set', f'domain.{k}={v}')]]


def test_every_named_config_is_valid_and_dry_runs_on_the_cpu(checkpoints, tmp_path):
    "Each named config loads, its student settings (GPU ones included) pass its student's schema, and --dry-run passes."
    from dataenvgym.registry import registered
    names = registered('run-config')
    assert {n.split('/')[0] for n in names} == {'paper', 'tiny'} and len(names) == 24
    for name in names:
        config = lookup('run-config', name)
        schema = getattr(lookup('student', config.student_kind), 'config_class', None)
        if config.student.settings: schema.model_validate(config.student.settings)       # e.g. paper/vqa: device, dtype
    for name in names:
        code, est, err = teach('--config', name, '--dry-run', *cpu_overrides(name, checkpoints, tmp_path / name))
        assert code == 0 and est['problem'] is None and est['files_read'], (name, err)


def test_the_tools_engine_is_told_the_loaded_benchmarks_tools(tmp_path):
    "With m&m's files, the guide in the engine's prompt lists their tools (and arguments), not the built-in ones."
    from dataenvgym.teaching.build import build_domain
    from dataenvgym.teaching.config import RunConfig
    files, _ = benchmark_files('tools', tmp_path)
    guide = build_domain(RunConfig(env='skill-list', domain={'name': 'tools', 'source': 'files', **files})).llm_guide
    assert 'get_location(city)' in guide and 'image_captioning(image)' in guide and 'capital:' not in guide, guide


def _math_run(checkpoints, tmp_path, **domain) -> Path:
    files, _ = benchmark_files('math', tmp_path / 'data')
    config = run_config('math', 'skill-list', {**files, **domain}, checkpoints, 'http://127.0.0.1:9/v1')
    (cfg := tmp_path / 'run.yaml').write_text(yaml.safe_dump(config))
    return cfg


def test_dry_run_refuses_what_the_run_refuses_in_the_same_words(checkpoints, tmp_path):
    "Each mistake: exit 2 and the same one line from --dry-run and from the run, naming the field and the fix; no traceback."
    (empty := tmp_path / 'empty.jsonl').write_text('')
    vqa, _ = benchmark_files('vqa', tmp_path / 'vqa')
    (no_images := tmp_path / 'no_images').mkdir()
    vqa_set = [a for k in ('val', 'test') for a in ('--set', f'domain.{k}={vqa[k]}')]
    cases = [(['--set', f'domain.val={empty}'], f'domain.val {empty} gives no validation tasks'),
             (['--student-model', str(tmp_path / 'no-such-model')], 'student.model: no model folder'),
             (['--set', f'domain.test={tmp_path / "data" / "val.jsonl"}'], 'overlap'),
             (['--set', 'student.settings.devise=cpu'], 'student.settings.devise: Extra inputs are not permitted'),
             (['--config', 'paper/vqa/skill-list', '--student-model', str(checkpoints['vision']), *vqa_set, '--set',
               'student.settings.device=cpu', '--set', f'domain.images={tmp_path / "nowhere"}'], 'no images folder'),
             (['--config', 'paper/vqa/skill-list', '--student-model', str(checkpoints['vision']), *vqa_set, '--set',
               'student.settings.device=cpu', '--set', f'domain.images={no_images}'], 'domain.check_images: false')]
    cfg = _math_run(checkpoints, tmp_path)
    for argv, says in cases:
        argv = argv if '--config' in argv else ['--config', str(cfg), *argv]
        dry, run = (teach(*argv, *extra, '--out', str(tmp_path / 'out')) for extra in (['--dry-run'], []))
        lines = [l for l in dry[2].splitlines() if 'error' in l]
        assert dry[0] == run[0] == 2 and lines == run[2].splitlines()[-1:] and says in lines[0], (argv, dry, run)
        assert 'Traceback' not in dry[2] + run[2] and not (tmp_path / 'out').exists()
    # the field it names works: the images check is off (the fixture's questions then repeat across val and test)
    code, _, err = teach(*cases[-1][0], '--dry-run', '--set', 'domain.check_images=false')
    assert code == 2 and 'images' not in err.splitlines()[-1] and 'overlap' in err, err


def test_an_unset_key_variable_warns(checkpoints, tmp_path, monkeypatch):
    from dataenvgym.teaching.build import MissingKeyWarning, build_llm
    from dataenvgym.teaching.config import LLMSettings
    monkeypatch.delenv('DATAENVGYM_NO_SUCH_KEY', raising=False)
    with pytest.warns(MissingKeyWarning, match='DATAENVGYM_NO_SUCH_KEY is not set'):
        build_llm(LLMSettings(model='m', base_url='http://127.0.0.1:9/v1', api_key_env='DATAENVGYM_NO_SUCH_KEY'))
    code, _, err = teach('--config', str(_math_run(checkpoints, tmp_path)), '--dry-run', '--llm-api-key-env', 'DATAENVGYM_NO_SUCH_KEY')
    assert code == 0 and 'warning: teacher.llm.api_key_env: the environment variable DATAENVGYM_NO_SUCH_KEY is not set' in err


def test_gpu_smoke_runs_on_the_cpu_with_tiny_models(checkpoints, tmp_path, capsys):
    "`benchmarks/gpu_smoke.py` (for a GPU: small real models through the paper configs), here on a tiny one on the CPU."
    import importlib.util
    spec = importlib.util.spec_from_file_location('gpu_smoke', Path(__file__).parents[1] / 'benchmarks' / 'gpu_smoke.py')
    spec.loader.exec_module(smoke := importlib.util.module_from_spec(spec))
    code = smoke.main(['--domains', 'tools', '--model', f'tools={checkpoints["text"]}', '--cpu', '--limit', '4', '--budget', '4',
                       '--steps', '1', '--out', str(tmp_path / 'smoke')])
    row = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert code == 0 and row['domain'] == 'tools' and row['exit'] == 0 and row['seconds'] > 0 and row['peak_memory_mb'] > 0, row


# --- how often the checks reject correct and wrong items ----------------------------------------------------------

def _rates(domain, make_items, n: int = 40, **engine) -> dict[str, float]:
    "Rejection rates of the LLM engine's checks on `n` correct and `n` deliberately wrong items of `domain`."
    rates = {}
    for kind in ('correct', 'wrong'):
        script = lambda request, kind=kind: {'arguments': make_items(kind, request)}
        with ScriptedServer(script) as srv:
            eng = LLMEngine(LLM(srv.config()), domain, rounds=1, retries=0, **engine)
            try: eng.generate([DataSpec(n=n, skill='probe', subskill='probe')], {}, seed=0)
            except RuntimeError: pass                              # nothing survived: every item rejected
        rates[kind] = sum(eng.rejected.values()) / n               # by the checks (not as repeats)
    return rates


def math_generator_items(kind, request):
    rng = random.Random(1)
    tasks = MathDomain(['add_2digit', 'mod_small', 'lin_1step']).tasks(40, seed=7)
    out = []
    for t in tasks:
        a = t.answer if kind == 'correct' else str(int(t.answer.split('/')[0]) + rng.randint(1, 9))
        out.append({'problem': t.prompt, 'solution': f'So the answer is {a}. The final answer is {a}.', 'final_answer': a})
    return {'items': out}


def test_rejection_rates_per_domain(tmp_path):
    "The checks keep (nearly) every correct item and drop (nearly) every wrong one, per domain; the rates are printed."
    table = {}
    table['math (domain check: solve)'] = _rates(MathDomain(['add_2digit']), math_generator_items)
    # MATH-style problems the domain cannot solve: agreement of 2 independent solutions (the stand-in solves 80% right)
    bank = load_math_jsonl(_jsonl(tmp_path / 'bank.jsonl', _math_rows(40, 200)))
    teacher = {k: StandInTeacher(MathDomain(['add_2digit']), wrong_rate=float(k == 'wrong'), bank=bank, solve_rate=0.8, seed=5)
               for k in ('correct', 'wrong')}
    table['math (MATH-style: agreement, 2 samples)'] = _rates(MathDomain(['add_2digit']), lambda kind, request: teacher[kind](request)['arguments'])
    code = CodeDomain(['str_transform', 'list_map', 'formulas'])
    code_tasks = code.tasks(40, seed=3)
    def code_items(kind, request):
        return {'items': [{'problem': t.prompt, 'func_name': t.metadata['func_name'],
                           'program': t.answer if kind == 'correct' else t.answer.replace('return ', 'return not ', 1),
                           'tests': [{'input': x['input'], 'output': x['output']} for x in t.metadata['public_tests'] + t.metadata['hidden_tests']]}
                          for t in code_tasks]}
    table['code (program passes its own tests)'] = _rates(code, code_items)
    tools = ToolDomain()
    tool_tasks = tools.tasks(40, seed=4)
    def tool_items(kind, request):        # wrong: another request's plan (it executes, but is not this request's)
        return {'items': [{'request': t.prompt, 'plan': t.answer if kind == 'correct' else tool_tasks[(i + 1) % 40].answer}
                          for i, t in enumerate(tool_tasks)]}
    table['tools (plan executes and fits the request)'] = _rates(tools, tool_items)
    rng = random.Random(2)
    def scene(kind):
        obj = lambda: ' '.join(rng.choice(VOCAB[k]) for k in ('size', 'color', 'shape'))
        return f'a {obj()} left of a {obj()}' if kind == 'correct' else f'a {rng.choice(["plaid", "striped"])} hexagon'
    table['vqa (scene renders)'] = _rates(VQADomain(['color', 'count_all']),
                                          lambda kind, request: {'items': [{'scene': scene(kind)} for _ in range(40)]})
    print('\n' + '\n'.join(f'{k:<48} correct rejected {v["correct"]:5.1%}   wrong rejected {v["wrong"]:5.1%}' for k, v in table.items()))
    for name, r in table.items():
        assert r['wrong'] >= 0.9, (name, r)
        assert r['correct'] <= (0.15 if 'agreement' in name else 0.0), (name, r)

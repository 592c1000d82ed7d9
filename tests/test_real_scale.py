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
from dataenvgym.domains.vqa import VQADomain, SceneItem, VOCAB
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
    assert 0 <= res['test_accuracy_best'] <= 1 and 'engine_rejected' in res       # the test result, the rejections
    data = [json.loads(l) for l in (tmp_path / 'run' / 'iteration_1' / 'data.jsonl').read_text().splitlines()]
    assert data and all(d['source'] == 'llm' for d in data)
    if domain == 'vqa': assert all('scene' in d['metadata'] for d in data)   # the rendered scene travels with the datum


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
    "The installed `dataenvgym` runs a config file too; a teacher whose every item is wrong fails the run loudly."
    import subprocess
    files, bank = benchmark_files('math', tmp_path / 'data')
    dom = lookup('preset', 'math/tiny').make_domain()
    with ScriptedServer(StandInTeacher(dom, wrong_rate=1.0, bank=bank, solve_rate=1.0)) as srv:
        (cfg := tmp_path / 'run.yaml').write_text(yaml.safe_dump(run_config('math', 'skill-list', files, checkpoints, srv.url)))
        out = subprocess.run(['dataenvgym', 'teach', '--config', str(cfg), '--out', str(tmp_path / 'run')],
                             capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and 'nothing the LLM wrote' in out.stderr and 'independent solutions disagree' in out.stderr, out.stderr


# --- how often the checks reject correct and wrong items ----------------------------------------------------------

def _rates(domain, make_items, n: int = 40, **engine) -> dict[str, float]:
    "Rejection rates of the LLM engine's checks on `n` correct and `n` deliberately wrong items of `domain`."
    rates = {}
    for kind in ('correct', 'wrong'):
        script = lambda request, kind=kind: {'arguments': make_items(kind, request)}
        with ScriptedServer(script) as srv:
            eng = LLMEngine(LLM(srv.config()), domain, rounds=1, **engine)
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

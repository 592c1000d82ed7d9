"""The `dataenvgym` console script, run as a user would run it; its argument and config errors also through `cli.main` in
this process (`in_process`), which gives the same exit status and stderr without starting an interpreter each time."""
import io, json, subprocess, sys
from contextlib import redirect_stderr, redirect_stdout

import pytest


def run(*args, check=True):
    return subprocess.run(['dataenvgym', *args], capture_output=True, text=True, check=check, timeout=600)


def test_student_json_has_the_documented_keys():
    out = run('student', '--domain', 'math', '--seed', '3', '--n-train', '300', '--n-eval', '60', '--steps', '20', '--json')
    res = json.loads(out.stdout)
    assert {'accuracy', 'per_skill', 'train_examples_per_s'} <= set(res)
    assert 0 <= res['accuracy'] <= 1 and res['train_examples_per_s'] > 0
    assert set(res['per_skill']) == {'addition', 'subtraction', 'multiplication', 'modular_arithmetic'}


def test_same_seed_same_result():
    args = ('student', '--seed', '5', '--n-train', '200', '--n-eval', '40', '--steps', '15', '--json')
    a, b = (json.loads(run(*args).stdout) for _ in range(2))
    assert a['per_subskill'] == b['per_subskill']


def in_process(*args) -> subprocess.CompletedProcess:
    "`dataenvgym ARGS` through `cli.main` in this process: what the console script runs, without a new interpreter to start."
    from dataenvgym.cli import main
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try: code = main(list(args))
        except SystemExit as e: code = e.code      # argparse's usage errors exit
    return subprocess.CompletedProcess(['dataenvgym', *args], code, out.getvalue(), err.getvalue())


def one_line_error(*args, says: str, env=None, fresh: bool = False):
    """Run the command expecting a user error: exit status 2, one line on stderr that contains `says`, no traceback.
    In this process unless `fresh` or an `env` is given: an error is found before anything heavy runs, and each new
    interpreter costs seconds of imports (the console script itself runs in `run` and in the `fresh` cases)."""
    if fresh or env is not None: out = subprocess.run(['dataenvgym', *args], capture_output=True, text=True, timeout=600, env=env)
    else: out = in_process(*args)
    assert out.returncode == 2 and out.stderr.count('\n') == 1 and says in out.stderr, (args, out.returncode, out.stderr[-2000:])
    assert out.stderr.startswith('dataenvgym ') and 'Traceback' not in out.stderr
    return out.stderr


def test_unknown_names_are_one_line():
    one_line_error('student', '--domain', 'chess', fresh=True, says="argument --domain: invalid choice: 'chess' (choose from 'math'")
    one_line_error('teach', '--env', 'nope', says="invalid choice: 'nope' (choose from 'open-ended', 'skill-list', 'skill-tree')")
    one_line_error('teach', '--preset', 'nope', says="Unknown preset 'nope' for the math domain; valid presets: math/embedded")
    one_line_error('teach', '--policy', 'nope', '--preset', 'tiny', says="Unknown policy 'skill-tree/nope'; valid policy names")
    one_line_error('student', '--n-train', '0', says="argument --n-train: expected a whole number of at least 1, got '0'")


def test_bad_config_files_are_one_line(tmp_path):
    files = {'broken.yaml': 'eval_seeds: [5\n', 'values.yaml': 'eval_seeds: 9-5\n', 'old.yaml': 'eval_seeds: [5, 5]\n', 'types.yaml': 'sft: {max_steps: many}\n',
             'unknown.yaml': 'nonsense_key: 3\n', 'list.yaml': '- 1\n- 2\n'}
    for name, text in files.items(): (tmp_path / name).write_text(text)
    for name, says in [('missing.yaml', 'no config file missing.yaml (named configs: tiny, tiny-curriculum'),
                       ('broken.yaml', 'broken.yaml: not valid YAML: expected \',\' or \']\''),
                       ('values.yaml', "values.yaml: eval_seeds: the seed range '9-5' is empty"),
                       ('old.yaml', 'old.yaml: eval_seeds: [5, 5]: an old-style [start, stop) pair needs 0 ≤ start < stop'),
                       ('types.yaml', 'types.yaml: sft.max_steps: Input should be a valid integer'),
                       ('unknown.yaml', 'unknown.yaml: nonsense_key: Extra inputs are not permitted'),
                       ('list.yaml', 'list.yaml: Input should be a valid dictionary')]:
        one_line_error('train', 'sft', '--config', str(tmp_path / name) if name != 'missing.yaml' else name, says=says)


def test_damaged_or_foreign_run_folders_are_one_line(tmp_path):
    (tmp_path / 'damaged').mkdir(); (tmp_path / 'damaged' / 'run.json').write_text('{not json')
    one_line_error('teach', '--preset', 'tiny', '--out', str(tmp_path / 'damaged'), says='run.json is damaged (Expecting')
    (tmp_path / 'foreign').mkdir()
    (tmp_path / 'foreign' / 'run.json').write_text(json.dumps({'env': 'skill-list', 'policy': 'with-state', 'seed': 2}))
    one_line_error('teach', '--preset', 'tiny', '--out', str(tmp_path / 'foreign'),
                   says='holds a different run (skill-list, with-state, seed 2); use another folder')
    run('teach', '--preset', 'tiny', '--iterations', '1', '--out', str(tmp_path / 'run'))
    (tmp_path / 'run' / 'iteration_1' / 'log.json').write_text('garbage')
    one_line_error('teach', '--preset', 'tiny', '--iterations', '1', '--out', str(tmp_path / 'run'),
                   says=f'cannot resume the run in {tmp_path / "run"} (Invalid JSON')
    out = run('teach', '--preset', 'tiny', '--out', str(tmp_path / 'damaged'), '--debug', check=False)
    assert out.returncode == 1 and 'Traceback' in out.stderr and 'run.json is damaged' in out.stderr.splitlines()[-1]


def test_a_missing_extra_and_a_missing_recording_are_one_line(tmp_path):
    "Without openai (the llm extra) an LLM run says which extra to install; replaying a missing recording says so."
    code = ("import sys; sys.modules['openai'] = None; from dataenvgym.cli import main; "
            "sys.exit(main(['teach', '--preset', 'tiny', '--llm-model', 'm', '--out', sys.argv[1]]))")
    out = subprocess.run([sys.executable, '-c', code, str(tmp_path / 'run')], capture_output=True, text=True, timeout=600)
    assert out.returncode == 2 and out.stderr == "dataenvgym teach: error: this needs the optional package openai: pip install 'dataenvgym[llm]'\n"
    one_line_error('teach', '--preset', 'tiny', '--llm-model', 'm', '--llm-cache', str(tmp_path / 'none.jsonl'),
                   '--llm-cache-mode', 'replay', fresh=True, says='No recording at')


def test_train_sft_grpo_eval_from_a_config_file(tmp_path):
    "The three phases of `dataenvgym train` from a YAML file, each picking up the model the phase before saved."
    import yaml
    config = tmp_path / 'agent.yaml'
    config.write_text(yaml.safe_dump({'warmup_seeds': [0, 4], 'grpo_seeds': [200, 204], 'eval_seeds': [1000, 1002],
                                      'baselines': ['heuristic'], 'max_turns': 4, 'threads': 1,
                                      'sft': {'max_steps': 5}, 'grpo': {'steps': 1, 'num_generations': 2, 'per_step': 1}}))
    out = tmp_path / 'run'
    sft, grpo, ev = (json.loads(run('train', phase, '--config', str(config), '--out', str(out), '--json').stdout)
                     for phase in ('sft', 'grpo', 'eval'))
    assert sft['steps'] == 5 and sft['length']['answers_cut'] == 0 and (out / 'sft' / 'config.json').exists()
    assert grpo['from'] == str(out / 'sft') and grpo['episodes'] == 2 and len(grpo['reward']) == 1
    assert ev['model'] == str(out / 'grpo') and set(ev['success_rate']) == {'trained', 'sft', 'heuristic'}   # GRPO beside its start
    rows = [json.loads(l) for l in (out / 'eval.jsonl').read_text().splitlines()]
    tasks = ['task_0_tutorial', 'task_1_easy', 'task_2_medium', 'task_3_hard', 'task_4_expert']  # every task, by default
    assert len(rows) == 30 and {r['seed'] for r in rows} == {1000, 1001} and list(ev['tasks']) == tasks
    assert all((out / f).exists() for f in ['logs/sft.jsonl', 'logs/grpo.jsonl', 'logs/rollouts.jsonl', 'eval.png', 'training.png',
                                            'eval.md'])
    text = run('train', 'eval', '--config', str(config), '--out', str(out)).stdout
    assert text.startswith('success rate on seeds 1000-1001') and '| task_3_hard | trained | 2 |' in text
    assert 'GRPO minus its SFT start' in text and 'Commands per episode' in text


def test_train_with_a_bad_config_is_a_clear_error(tmp_path):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('eval_seeds: 5-5,7\n')
    one_line_error('train', 'sft', '--config', str(bad), says='a phase takes a block of consecutive seeds, like 0-29')
    one_line_error('train', 'eval', '--config', 'tiny', '--out', str(tmp_path / 'empty'), fresh=True, says='nothing to evaluate')


CHECKED = {'math': lambda d: d.prompt.endswith('='), 'tools': lambda d: '(' in d.response,           # sums; tool plans
           'code': lambda d: 'def ' in d.response, 'vqa': lambda d: 'scene' in d.metadata}        # programs; rendered scenes


@pytest.mark.parametrize('domain', ['math', pytest.param('code', marks=pytest.mark.bubblewrap), 'tools', 'vqa'])
def test_teach_with_an_llm_runs_the_domain_it_names(tmp_path, domain):
    "`teach --domain D --llm-model M --llm-base-url URL` runs domain D with the LLM modules, in all four, and run.json says so."
    from dataenvgym.core import Datum, read_jsonl
    from dataenvgym.registry import lookup
    from dataenvgym.teaching.llm import ScriptedServer
    from dataenvgym.testing import StandInTeacher
    dom = lookup('preset', f'{domain}/tiny').make_domain()
    out = tmp_path / 'run'
    with ScriptedServer(StandInTeacher(dom)) as srv:
        res = json.loads(run('teach', '--domain', domain, '--preset', 'tiny', '--iterations', '1', '--out', str(out),
                             '--llm-model', 'stand-in', '--llm-base-url', srv.url, '--json').stdout)
    ran = json.loads((out / 'run.json').read_text())
    assert ran['domain'] == domain and ran['setup']['preset'] == f'{domain}/tiny' and ran['setup']['llm']['model'] == 'stand-in'
    assert (ran['setup']['engine'], ran['setup']['proposer'], ran['setup']['discoverer']) == ('llm', 'llm', 'LLMDiscoverer')
    assert {u['module'] for u in res['usage']} == {'discovery', 'proposer', 'engine'}
    data = read_jsonl(out / 'iteration_1' / 'data.jsonl', Datum)
    assert data and all(d.source == 'llm' and CHECKED[domain](d) for d in data), data[:2]
    assert set(res['test_per_skill_initial']) == set(dom.skills)


def test_teach_refuses_what_it_cannot_build_in_one_line():
    "Impossible combinations stop before anything runs: exit status 2 and one line, no traceback."
    for argv, says in [(('--env', 'skill-list', '--policy', 'oracle', '--llm-model', 'm'), "Unknown policy 'skill-list/oracle'"),
                       (('--domain', 'vqa', '--preset', 'tools/tiny'), 'valid presets: vqa/embedded, vqa/tiny'),
                       (('--domain', 'vqa', '--student', 'hf', '--student-model', 'gpt2'), 'the vqa domain needs an image student'),
                       (('--domain', 'code', '--student', 'vqa'), 'the code domain needs a text student'),
                       (('--config', 'paper/code/skill-tree', '--domain', 'math'), 'reads code tasks, not math tasks'),
                       (('--llm-base-url', 'http://127.0.0.1:9/v1'), 'need --llm-model'),
                       (('--set', 'teacher.polcy=x'), 'teacher.polcy'),
                       (('--policy', 'llm',), 'the LLM policy needs an LLM'),
                       (('--iterations', '0',), 'iterations')]:
        out = in_process('teach', '--preset', 'tiny', *argv)
        assert out.returncode == 2 and says in out.stderr, (argv, out.stderr[-2000:])
        assert out.stderr.count('\n') == 1 and 'Traceback' not in out.stderr, out.stderr


COMMANDS = ['student', 'teach', 'sweep', 'train', 'serve', 'eval']


def test_the_help_test_covers_every_command():
    import argparse
    from dataenvgym.cli import _parser
    (sub,) = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert sorted(sub.choices) == sorted(COMMANDS)


@pytest.mark.parametrize('argv', [['--help']] + [[c, '--help'] for c in COMMANDS])
def test_help_works_for_the_program_and_every_command(argv):
    "`--help` prints the usage and exits 0 (a `%` in a help string once made argparse raise)."
    from dataenvgym.cli import main
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit) as e: main(argv)
    assert e.value.code == 0 and 'usage: dataenvgym' in out.getvalue()


def test_train_reports_a_config_error_before_importing_torch():
    "`train` checks its config before torch, TRL and transformers load (seconds), so a typo is said at once."
    code = ("import sys; from dataenvgym.cli import main; rc = main(['train', 'sft', '--config', 'nosuch']); "
            "print(rc, [m for m in ('torch', 'transformers', 'trl') if m in sys.modules])")
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=600)
    assert out.stdout.strip() == '2 []' and 'no config file nosuch (named configs: tiny, ' in out.stderr, (out.stdout, out.stderr)


def test_version_is_the_package_version():
    "`dataenvgym --version` prints the version kept in one place, `dataenvgym.__version__` (pyproject.toml reads it)."
    import dataenvgym
    from dataenvgym.cli import main
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit) as e: main(['--version'])
    assert e.value.code == 0 and out.getvalue().strip() == f'dataenvgym {dataenvgym.__version__}'


def test_teach_config_without_a_name_lists_the_named_configs():
    "`teach config` alone lists every named config with what it is; with a name (or --config) it prints that config."
    out = in_process('teach', 'config')
    assert out.returncode == 0 and 'named configs' in out.stdout, out.stderr
    for name in ('paper/vqa/skill-tree', 'tiny/math/open-ended', 'paper/code/skill-list'): assert f'  {name} ' in out.stdout
    assert 'PaliGemma' in out.stdout or 'paligemma' in out.stdout
    assert in_process('teach', 'config', 'tiny/math/skill-list').stdout.startswith('env: skill-list')

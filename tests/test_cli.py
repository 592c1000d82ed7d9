"""The `dataenvgym` console script, run as a user would run it."""
import json, subprocess, sys


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


def test_unknown_domain_is_a_clear_error():
    out = run('student', '--domain', 'chess', check=False)
    assert out.returncode == 2 and "invalid choice: 'chess'" in out.stderr and 'math' in out.stderr


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
    assert ev['model'] == str(out / 'grpo') and set(ev['success_rate']) == {'trained', 'heuristic'}
    rows = [json.loads(l) for l in (out / 'eval.jsonl').read_text().splitlines()]
    assert len(rows) == 4 and {r['seed'] for r in rows} == {1000, 1001}
    assert all((out / f).exists() for f in ['logs/sft.jsonl', 'logs/grpo.jsonl', 'logs/rollouts.jsonl', 'eval.png', 'training.png'])
    text = run('train', 'eval', '--config', str(config), '--out', str(out)).stdout
    assert text.startswith('success rate on seeds [1000, 1002)') and 'task_0_tutorial' in text


def test_train_with_a_bad_config_is_a_clear_error(tmp_path):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('eval_seeds: [5, 5]\n')
    out = run('train', 'sft', '--config', str(bad), check=False)
    assert out.returncode != 0 and 'eval_seeds is [start, stop) with start < stop' in out.stderr
    out = run('train', 'eval', '--config', 'tiny', '--out', str(tmp_path / 'empty'), check=False)
    assert out.returncode != 0 and 'nothing to evaluate' in out.stderr


def test_teach_with_an_llm_runs_the_domain_it_names(tmp_path):
    "`teach --domain tools --llm-model M --llm-base-url URL` runs the tools domain with the LLM modules, and run.json says so."
    from dataenvgym.core import Datum, read_jsonl
    from dataenvgym.registry import lookup
    from dataenvgym.teaching.llm import ScriptedServer
    from dataenvgym.testing import StandInTeacher
    domain = lookup('preset', 'tools/tiny').make_domain()
    out = tmp_path / 'run'
    with ScriptedServer(StandInTeacher(domain)) as srv:
        res = json.loads(run('teach', '--domain', 'tools', '--preset', 'tiny', '--iterations', '1', '--out', str(out),
                             '--llm-model', 'stand-in', '--llm-base-url', srv.url, '--json').stdout)
    ran = json.loads((out / 'run.json').read_text())
    assert ran['domain'] == 'tools' and ran['setup']['preset'] == 'tools/tiny' and ran['setup']['llm']['model'] == 'stand-in'
    assert (ran['setup']['engine'], ran['setup']['proposer'], ran['setup']['discoverer']) == ('llm', 'llm', 'LLMDiscoverer')
    assert {u['module'] for u in res['usage']} == {'discovery', 'proposer', 'engine'}
    data = read_jsonl(out / 'iteration_1' / 'data.jsonl', Datum)
    assert data and all(d.source == 'llm' and '(' in d.response for d in data)          # tool plans, not sums
    asked = [r['messages'][-1]['content'] for r in srv.requests]
    assert any('capital' in a for a in asked)                                            # asked about tool requests
    assert set(res['test_per_skill_initial']) == set(domain.skills)


def test_teach_refuses_what_it_cannot_build_in_one_line():
    "Impossible combinations stop before anything runs: exit status 2 and one line, no traceback."
    for argv, says in [(('--env', 'skill-list', '--policy', 'llm', '--llm-model', 'm'), "Unknown policy 'skill-list/llm'"),
                       (('--domain', 'vqa', '--preset', 'tools/tiny'), 'valid presets: vqa/embedded, vqa/tiny'),
                       (('--domain', 'code', '--llm-model', 'm', '--llm-base-url', 'http://127.0.0.1:9/v1'),
                        'the code domain needs another engine'),
                       (('--policy', 'llm',), 'the LLM policy needs an LLM'),
                       (('--iterations', '0',), 'iterations')]:
        out = run('teach', '--preset', 'tiny', *argv, check=False)
        assert out.returncode == 2 and says in out.stderr, (argv, out.stderr[-2000:])
        assert out.stderr.count('\n') == 1 and 'Traceback' not in out.stderr, out.stderr

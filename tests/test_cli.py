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

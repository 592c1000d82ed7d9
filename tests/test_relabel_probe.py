"""`experiments/repair-expert-decision/`: the expert tier's relabel choice alone, learnt from labels by a fresh tiny
agent (`relabel_probe.py`), and the agents with kinds of fix left out that show the tier hinges on it (`ablations.py`)."""
import importlib.util, json, subprocess, sys
from pathlib import Path

import numpy as np
import pytest

from dataenvgym.repair.agents import InspectorAgent, play_episode, site_agreement
from dataenvgym.repair.demos import observation_text
from dataenvgym.repair.env import RepairEnv

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / 'experiments' / 'repair-expert-decision'
SCRIPT = HERE / 'relabel_probe.py'


def load(name: str):
    "A module of the experiment's folder, by its file name."
    spec = importlib.util.spec_from_file_location(name, HERE / f'{name}.py')
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
    return module


def probe(): return load('relabel_probe')


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)


def test_lines_are_the_agents_and_labels_the_inspectors():
    p = probe()
    report = p.site_report()
    # with the report's own agreements: the agent's line of it, and the inspector's next command on seed 1000
    own = [round(a * 100) for a in site_agreement(report).values()]
    commands = play_episode(RepairEnv('task_4_expert'), InspectorAgent(), 1000).commands
    after = commands[[i for i, c in enumerate(commands) if c == 'inspect_groups'][1] + 1]
    assert p.labelled(report, own) == (observation_text(report), after)
    # redrawn: the least-agreeing site's relabel under 60%, else validate
    line, label = p.labelled(report, [70, 12, 40])
    site_1 = next(r['n'] for r in report.metadata['recommendations'] if r['args']['site'] == 1)
    assert 'agree 12%' in line and label == f'apply {site_1}'
    assert p.labelled(report, [60, 99, 75])[1] == 'validate'
    labels = [p.example(report, np.random.default_rng(0))[1] for _ in range(3)]
    assert labels == [p.example(report, np.random.default_rng(0))[1] for _ in range(3)]   # seeded


def test_a_small_run_prints_the_accuracies_with_intervals():
    r = run('--train', '32', '--epochs', '1', '--test', '12', '--json')
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert (out['train'], out['test'], out['hidden'], out['layers']) == (32, 12, 64, 3)
    assert 0 <= out['accuracy'] <= 1 and out['accuracy_ci'][0] <= out['accuracy'] <= out['accuracy_ci'][1]
    assert out['relabel_accuracy'] is not None and len(out['examples']) == 3
    assert {'line', 'label', 'reply'} == set(out['examples'][0]) and out['examples'][0]['line'].startswith('fixes: ')


def test_bad_sizes_are_refused():
    r = run('--train', '0', '--json')
    assert r.returncode == 2 and '--train and --test need at least 1 line' in r.stderr


def test_an_agent_without_a_fix_is_refused_it_and_plays_on():
    "`WithoutFixes`: the left-out fix is answered by an error, never sent; the agent plays on."
    a = load('ablations')
    env = RepairEnv('task_4_expert')
    full = play_episode(env, InspectorAgent(), seed=1000)
    no_scale = a.WithoutFixes(InspectorAgent(), ['rescale'])
    lean = play_episode(env, no_scale, seed=1000)
    # the rescale (`apply 3` on seed 1000) is answered by an error and never sent; the inspector plays on and still
    # succeeds (its relabel is `apply 4` there: the site report still lists the rescales first)
    assert (no_scale.left_out, lean.success) == (['apply 3'], True)
    words = lambda r: [c for c in r.commands if not c.startswith('apply')]
    assert words(lean) == words(full) and len(lean.commands) == len(full.commands) - 1
    # without the site relabel the inspector inspects again, is refused again, and fails
    no_site = a.WithoutFixes(InspectorAgent(), ['relabel_site'])
    r = play_episode(env, no_site, seed=1000)
    assert (r.success, len(no_site.left_out)) == (False, 2)
    assert r.commands.count('inspect_groups') == 3        # it looked again after the refusal


def test_ablations_name_the_variants_and_refuse_bad_kinds_and_stubborn_agents():
    a = load('ablations')
    assert list(a.ablations('inspector', lambda s: InspectorAgent(), ['impute', 'rescale'])) == \
        ['inspector', 'inspector without impute', 'inspector without rescale']
    with pytest.raises(ValueError, match=r"unknown fix kinds \['rescal'\]"): a.WithoutFixes(InspectorAgent(), ['rescal'])

    class Stubborn:
        def begin(self, env): pass
        def act(self, obs): return 'apply 1' if obs.metadata['recommendations'] else 'query_cleaner'
    env = RepairEnv('task_4_expert')
    stubborn = a.WithoutFixes(Stubborn(), ['coerce_numeric'], patience=5)
    obs = env.reset(seed=1000); stubborn.begin(env)
    obs = env.step(stubborn.act(obs))
    with pytest.raises(RuntimeError, match='5 times in a row'): stubborn.act(obs)


def test_the_ablation_table_runs():
    "Two expert seeds: the inspector and the oracle, each without each fix; without the site relabel the inspector fails."
    r = subprocess.run([sys.executable, str(HERE / 'ablations.py'), '--seeds', '0:2', '--json'], capture_output=True,
                       text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out['seeds'] == [0, 2] and len(out['agents']) == 2 + 5 + 6
    assert out['agents']['inspector without relabel_site']['success'] == 0.0

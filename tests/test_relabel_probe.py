"""`benchmarks/relabel_probe.py`: the expert tier's relabel choice alone, learnt from labels by a fresh tiny agent."""
import importlib.util, json, subprocess, sys
from pathlib import Path

import numpy as np

from dataenvgym.repair.agents import InspectorAgent, play_episode, site_agreement
from dataenvgym.repair.env import RepairEnv
from dataenvgym.repair.train import observation_text

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / 'benchmarks' / 'relabel_probe.py'


def probe():
    spec = importlib.util.spec_from_file_location('relabel_probe', SCRIPT)
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
    return module


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

"""Benchmark grading throughput of the code domain, with the full isolation and with the best-effort mode, in one run.

Draws `--n` seeded tasks from `CodeDomain` (all fifteen subskills, levels 1-3, 6 tests each), and grades, with
`--workers` threads (each grading runs one sandboxed `python -I -S` process per task), in each isolation mode —
`os` (bubblewrap: namespaces, nobody, seccomp, a private tmpfs) and `best-effort` (the old way: audit hook, resource
limits and a network namespace) — one after the other for each kind of answer, so both see the same machine:

- the reference solutions (all pass: every test is run),
- wrong answers (a function that returns None: fails on the first test, but every test still runs in the one process),
- answers that loop forever, on a tenth as many tasks with a 0.5 s per-test limit (the cost of a timeout),

and the start-up time of one sandbox (the median wall time of `--startups` sequential runs of an empty program, and of
`bwrap ... true` alone). Prints one JSON object: tasks per second for each mode and kind, the ratio best-effort / os,
the load average before and after (other processes on the machine slow everything down) and the core count.

    python benchmarks/code_grading.py
    python benchmarks/code_grading.py --n 400 --workers 2

`--baseline DIR` also measures another copy of the package (a folder holding `dataenvgym/`, e.g. a `git worktree` of
an older commit) in the same run: the `os` mode's reference-solution and wrong-answer rates of the baseline and of this
copy, each in a fresh process, alternating for `--rounds` rounds, and the ratio this / baseline.

`--hostile` measures what one 1 MB hostile response costs the grader, each in a fresh process that first grades one
honest answer (the baseline): the grader's own CPU seconds (user + system of the grading process, not of the box) and
its peak resident memory above the baseline (`ru_maxrss`), for each attack in `HOSTILE`; with `--baseline`, for the
baseline copy too (each run stopped after `--hostile-timeout` seconds).

    python benchmarks/code_grading.py --baseline /tmp/base --rounds 2 --hostile
"""
import argparse, json, os, platform, re, statistics, subprocess, sys, time
from pathlib import Path

from dataenvgym.domains.code import CodeDomain
from dataenvgym.sandbox import Limits, _isolation_prefix, refusal, run_program

MODES = ('os', 'best-effort')


def rate(domain: CodeDomain, tasks, responses, workers: int) -> dict:
    start = time.perf_counter()
    attempts = domain.grade_many(tasks, responses, workers)
    s = time.perf_counter() - start
    return {'tasks': len(tasks), 'seconds': round(s, 2), 'tasks_per_s': round(len(tasks) / s, 1),
            'pass_rate': round(sum(a.correct for a in attempts) / len(attempts), 3)}


def startup_ms(limits: Limits, n: int) -> float:
    "Median wall time of running an empty program in a fresh sandbox, in milliseconds."
    times = []
    for _ in range(n):
        start = time.perf_counter()
        assert run_program('pass', limits=limits).status == 'ok'
        times.append(time.perf_counter() - start)
    return round(1000 * statistics.median(times), 1)


def bwrap_ms(n: int) -> float | None:
    "Median wall time of bubblewrap building the box around `true` (no interpreter), in milliseconds."
    if not _isolation_prefix(): return None
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run([*_isolation_prefix(), '--', '/usr/bin/true'], check=True, env={})
        times.append(time.perf_counter() - start)
    return round(1000 * statistics.median(times), 1)


def main(n: int, workers: int, seed: int, startups: int) -> dict:
    if refusal(): raise SystemExit(refusal())
    domains = {m: CodeDomain(limits=Limits(isolation=m)) for m in MODES}
    loopers = {m: CodeDomain(limits=Limits(timeout=0.5, isolation=m)) for m in MODES}
    tasks = domains['os'].tasks(n, seed=seed)
    wrong = [re.sub(r'\n.*', '\n    return None', t.answer, flags=re.S) for t in tasks]
    k = max(2, n // 10)
    loops = [t.answer.split('\n')[0] + '\n    while True: pass' for t in tasks[:k]]
    load_before = os.getloadavg()
    out = {'benchmark': 'code_grading', 'workers': workers, 'cpu_count': os.cpu_count(), 'seed': seed,
           'tests_per_task': len(tasks[0].metadata['public_tests']) + len(tasks[0].metadata['hidden_tests']),
           'python': platform.python_version(), 'root': os.geteuid() == 0, 'modes': {m: {} for m in MODES}}
    for kind, ts, responses, doms in (('reference_solutions', tasks, [t.answer for t in tasks], domains),
                                      ('wrong_answers', tasks, wrong, domains),
                                      ('infinite_loops_0.5s', tasks[:k], loops, loopers)):
        for m in MODES: out['modes'][m][kind] = rate(doms[m], ts, responses, workers)
    for m in MODES: out['modes'][m]['startup_ms'] = startup_ms(Limits(isolation=m), startups)
    out['bwrap_true_ms'] = bwrap_ms(startups)
    out['best_effort_over_os'] = {kind: round(out['modes']['best-effort'][kind]['tasks_per_s'] / out['modes']['os'][kind]['tasks_per_s'], 2)
                                  for kind in ('reference_solutions', 'wrong_answers', 'infinite_loops_0.5s')}
    out['load_average_before'], out['load_average_after'] = [round(x, 2) for x in load_before], [round(x, 2) for x in os.getloadavg()]
    return out


THROUGHPUT = r"""
import json, re, sys, time
from dataenvgym.domains.code import CodeDomain
from dataenvgym.sandbox import Limits
n, workers, seed = map(int, sys.argv[1:4])
dom = CodeDomain(limits=Limits(isolation='os'))
tasks = dom.tasks(n, seed=seed)
wrong = [re.sub(r'\n.*', '\n    return None', t.answer, flags=re.S) for t in tasks]
out = {}
for kind, responses in (('reference_solutions', [t.answer for t in tasks]), ('wrong_answers', wrong)):
    start = time.perf_counter(); attempts = dom.grade_many(tasks, responses, workers)
    out[kind] = round(n / (time.perf_counter() - start), 1)
    assert sum(a.correct for a in attempts) == (n if kind == 'reference_solutions' else 0), kind
print(json.dumps(out))
"""


def compare(baseline: str, n: int, workers: int, seed: int, rounds: int) -> dict:
    "Tasks per second (`os` mode) of the baseline copy and of this one, each in a fresh process, alternating."
    here, runs = str(Path(__file__).resolve().parents[1]), {'baseline': [], 'this': []}
    for _ in range(rounds):
        for name, path in (('baseline', baseline), ('this', here)):
            out = subprocess.run([sys.executable, '-c', THROUGHPUT, str(n), str(workers), str(seed)], capture_output=True,
                                 text=True, env={**os.environ, 'PYTHONPATH': path}, cwd=path, check=True)
            runs[name].append(json.loads(out.stdout.splitlines()[-1]))
    kinds = ('reference_solutions', 'wrong_answers')
    mean = {name: {k: round(statistics.mean(r[k] for r in rs), 1) for k in kinds} for name, rs in runs.items()}
    return {'baseline_dir': baseline, 'rounds': runs, 'mean_tasks_per_s': mean,
            'this_over_baseline': {k: round(mean['this'][k] / mean['baseline'][k], 2) for k in kinds}}


BYPASS = 'import __main__ as b\nb.DENY.clear(); b.DENY_MODULES.clear(); b.PATHS.clear(); b.refuse = lambda what: None\n'
SIZE = 999_000   # 1 MB, just under the longest code the grader runs (MAX_CODE = 1,000,000 characters)
PAD = lambda code: code + '\n#' + 'x' * (SIZE - len(code) - 2)   # a comment brings the response to 1 MB
HOSTILE = {   # name -> (the kind of task, a 1 MB response)
    'backticks': ('functional', '`' * SIZE),
    'fence_lines': ('functional', '```\n' + '\n  ``' * (SIZE // 5)),
    'nested_report_7MB': ('functional', PAD(BYPASS + 'import os, sys\ndef f(*a):\n    os.write(int(sys.argv[2]), b\'{"i": 0, "got": "[\' + '
                                            'b"[[0]], " * 1_000_000 + b\'[[0]]]"}\\n\')\n    os._exit(0)\ndef shout(*a): return f()')),
    'stdout_flood': ('functional', PAD('import sys\nwhile True: sys.stdout.write("x" * 65536)')),
    'token_line_4MB': ('stdin', PAD('print("1 " * 2_000_000)')),
    'small_writes': ('stdin', PAD(BYPASS + 'import os, fcntl\nfcntl.fcntl(1, fcntl.F_SETFL, os.O_DIRECT)\n'
                                  'while True: os.write(1, b"1")')),
}
COST = r"""
import json, resource, sys, time
from dataenvgym.core import Task
from dataenvgym.domains.code import CodeDomain
from dataenvgym.sandbox import Limits
kind, response = sys.argv[1], sys.stdin.read()
dom = CodeDomain(limits=Limits(timeout=2.0))
task = dom.tasks(1, subskill='str_transform', seed=0)[0]
if kind == 'stdin':
    t = [{'input': '3\n', 'output': '6\n', 'testtype': 'stdin'}, {'input': '5\n', 'output': '10\n', 'testtype': 'stdin'}]
    task = task.model_copy(update={'answer': 'print(2 * int(input()))', 'metadata': {'public_tests': t[:1], 'hidden_tests': t[1:]}})
assert dom.grade(task, task.answer).correct   # the baseline: the grader warm, one honest grade done
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
rss0, cpu0, wall0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, cpu(), time.perf_counter()
a = dom.grade(task, response)
print(json.dumps({'correct': a.correct, 'feedback': a.feedback[:120], 'grader_cpu_s': round(cpu() - cpu0, 3),
                  'wall_s': round(time.perf_counter() - wall0, 2),
                  'peak_rss_above_baseline_mb': round((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024, 1)}))
"""


def hostile_costs(path: str, timeout: float) -> dict:
    "What each 1 MB hostile response in `HOSTILE` costs the grader of the copy at `path`."
    out = {}
    for name, (kind, response) in HOSTILE.items():
        try:
            r = subprocess.run([sys.executable, '-c', COST, kind], input=response, capture_output=True, text=True, timeout=timeout,
                               env={**os.environ, 'PYTHONPATH': path}, cwd=path)
            out[name] = json.loads(r.stdout.splitlines()[-1]) if r.returncode == 0 else {'raised': r.stderr.strip().splitlines()[-1][:200]}
        except subprocess.TimeoutExpired: out[name] = {'timed_out_after_s': timeout}
    return out


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--n', type=int, default=240)
    p.add_argument('--workers', type=int, default=2)
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--startups', type=int, default=20)
    p.add_argument('--baseline', help='a folder holding another copy of dataenvgym/ to compare with, in the same run')
    p.add_argument('--rounds', type=int, default=2)
    p.add_argument('--hostile', action='store_true', help='measure the cost of 1 MB hostile responses')
    p.add_argument('--hostile-timeout', type=float, default=60)
    p.add_argument('--skip-modes', action='store_true', help='skip the os / best-effort comparison')
    a = p.parse_args()
    here = str(Path(__file__).resolve().parents[1])
    out = {} if a.skip_modes else main(a.n, a.workers, a.seed, a.startups)
    if a.baseline: out['versus_baseline'] = compare(a.baseline, a.n, a.workers, a.seed, a.rounds)
    if a.hostile:
        out['hostile_1MB'] = {'this': hostile_costs(here, a.hostile_timeout)}
        if a.baseline: out['hostile_1MB']['baseline'] = hostile_costs(a.baseline, a.hostile_timeout)
    out['load_average_end'] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=1))

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
"""
import argparse, json, os, platform, re, statistics, subprocess, time

from dataenvgym.domains.code import CodeDomain
from dataenvgym.sandbox import Limits, isolation_prefix, refusal, run_program

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
    if not isolation_prefix(): return None
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run([*isolation_prefix(), '--', '/usr/bin/true'], check=True, env={})
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


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--n', type=int, default=240)
    p.add_argument('--workers', type=int, default=2)
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--startups', type=int, default=20)
    a = p.parse_args()
    print(json.dumps(main(a.n, a.workers, a.seed, a.startups), indent=1))

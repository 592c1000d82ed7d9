"""Benchmark grading throughput of the code domain: tasks graded per second by the sandboxed grader.

Draws `--n` seeded tasks from `CodeDomain` (all fifteen subskills, levels 1-3, 6 tests each), and grades, with
`--workers` threads (each grading runs one sandboxed `python -I -S` process per task):

- the reference solutions (all pass: every test is run),
- wrong answers (a function that returns None: fails on the first test, but every test still runs in the one process),
- answers that loop forever, on a tenth as many tasks with a 0.5 s per-test limit (the cost of a timeout),

and prints one JSON object with tasks per second for each, the load average before and after (other processes on the
machine slow everything down) and the machine's core count.

    python benchmarks/code_grading.py
    python benchmarks/code_grading.py --n 400 --workers 2
"""
import argparse, json, os, platform, re, time

from dataenvgym.domains.code import CodeDomain, Limits, isolation_prefix


def rate(domain: CodeDomain, tasks, responses, workers: int) -> dict:
    start = time.perf_counter()
    attempts = domain.grade_many(tasks, responses, workers)
    s = time.perf_counter() - start
    return {'tasks': len(tasks), 'seconds': round(s, 2), 'tasks_per_s': round(len(tasks) / s, 1),
            'pass_rate': round(sum(a.correct for a in attempts) / len(attempts), 3)}


def main(n: int, workers: int, seed: int) -> dict:
    domain = CodeDomain()
    tasks = domain.tasks(n, seed=seed)
    load_before = os.getloadavg()
    wrong = [re.sub(r'\n.*', '\n    return None', t.answer, flags=re.S) for t in tasks]
    k = max(2, n // 10)
    loops = [t.answer.split('\n')[0] + '\n    while True: pass' for t in tasks[:k]]
    out = {'benchmark': 'code_grading', 'workers': workers, 'cpu_count': os.cpu_count(), 'seed': seed,
           'tests_per_task': len(tasks[0].metadata['public_tests']) + len(tasks[0].metadata['hidden_tests']),
           'python': platform.python_version(), 'network_namespace': bool(isolation_prefix()),
           'reference_solutions': rate(domain, tasks, [t.answer for t in tasks], workers),
           'wrong_answers': rate(domain, tasks, wrong, workers),
           'infinite_loops_0.5s': rate(CodeDomain(limits=Limits(timeout=0.5)), tasks[:k], loops, workers)}
    out['load_average_before'], out['load_average_after'] = [round(x, 2) for x in load_before], [round(x, 2) for x in os.getloadavg()]
    return out


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--n', type=int, default=240)
    p.add_argument('--workers', type=int, default=2)
    p.add_argument('--seed', type=int, default=0)
    a = p.parse_args()
    print(json.dumps(main(a.n, a.workers, a.seed), indent=1))

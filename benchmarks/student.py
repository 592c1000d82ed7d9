"""Benchmark the embedded tiny student on the easiest math subskill, two-digit addition.

Trains a default `TinyLM` (one `fit`, the default number of steps) on seeded `add_2digit` tasks, evaluates it on
held-out tasks every `--every` steps, and prints one JSON object:

- `train_examples_per_s`: training throughput (evaluation time excluded),
- `eval_examples_per_s`: `evaluate` throughput (greedy decoding and grading) on the held-out tasks,
- `minutes_to_90`: wall-clock minutes from the start of `fit` (evaluations included) until held-out exact match first
  reaches 90% (null if it never does),
- `final_accuracy`, `peak_memory_mb` (peak resident memory of the process), `threads`, the load average before and after
  (other processes on the machine slow everything down), the config and the accuracy curve.

    python benchmarks/student.py
    python benchmarks/student.py --seed 1 --threads 2
    python benchmarks/student.py --student '{"layers": 2}'

Targets on two CPU cores: at least 1,000 training examples/s, and 90% within 3 minutes.
"""
import argparse, json, os, resource, time

import torch

from dataenvgym.core import Datum, evaluate
from dataenvgym.domains.math import MathDomain
from dataenvgym.students.tiny import TinyLM


def benchmark(seed: int, every: int, n_train: int, n_eval: int, student_settings: dict | None = None) -> dict:
    dom = MathDomain(['add_2digit'])
    split = dom.splits(n_train, 0, n_eval, seed=seed)
    data, test = [Datum.from_task(t) for t in split['train']], split['test']
    student = TinyLM(seed=seed, **(student_settings or {}))
    curve, eval_s, start = [], 0.0, time.perf_counter()

    def on_step(step: int, loss: float) -> None:
        nonlocal eval_s
        if (step + 1) % every: return
        t0 = time.perf_counter()
        acc = evaluate(student, test, dom).overall
        eval_s += time.perf_counter() - t0
        curve.append({'step': step + 1, 'minutes': round((time.perf_counter() - start) / 60, 3),
                      'loss': round(loss, 4), 'accuracy': round(acc, 4)})

    load_before = os.getloadavg()[0]
    student.fit(data, on_step=on_step, progress=False)
    train_s = time.perf_counter() - start - eval_s
    t0 = time.perf_counter()
    final = evaluate(student, test, dom).overall
    eval_rate = len(test) / (time.perf_counter() - t0)
    hit = next((c['minutes'] for c in curve if c['accuracy'] >= 0.9), None)
    return {'train_examples_per_s': round(student.examples_seen / train_s, 1),
            'eval_examples_per_s': round(eval_rate, 1),
            'minutes_to_90': hit,
            'final_accuracy': round(final, 4),
            'train_minutes': round(train_s / 60, 3),
            'peak_memory_mb': round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            'parameters': student.num_parameters, 'threads': torch.get_num_threads(),
            'load_average': [round(load_before, 2), round(os.getloadavg()[0], 2)],
            'task': {'subskill': 'add_2digit', 'n_train': n_train, 'n_eval': n_eval, 'seed': seed, 'every': every},
            'config': student.config.model_dump(exclude={'chars'}), 'curve': curve}


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--every', type=int, default=100, help='evaluate every N optimiser steps')
    p.add_argument('--n-train', type=int, default=6000, help='distinct training tasks')
    p.add_argument('--n-eval', type=int, default=300, help='held-out tasks')
    p.add_argument('--student', type=json.loads, default={}, help='TinyLM settings to override, as JSON (e.g. \'{"layers": 2}\')')
    p.add_argument('--threads', type=int, default=None, help='torch threads (default: PyTorch chooses)')
    a = p.parse_args()
    if a.threads: torch.set_num_threads(a.threads)
    print(json.dumps(benchmark(a.seed, a.every, a.n_train, a.n_eval, a.student)))

"""Calibrate the math taxonomy to the tiny student: how much data and time each subskill needs to reach 80%.

Trains one TinyLM on an even mix of the chosen subskills (as in a teaching episode) and evaluates it on held-out
tasks of every subskill at regular intervals. For each subskill it reports the first evaluation at which accuracy
reached the threshold: the examples of that subskill seen by then and the wall-clock minutes.

    python benchmarks/calibrate_math.py --subskills embedded --minutes 6
    python benchmarks/calibrate_math.py --subskills full --minutes 10

Prints one JSON object.
"""
import argparse, json, time

import torch

from dataenvgym.core import Datum, EvalReport, grade_all
from dataenvgym.domains.math import EMBEDDED_SUBSKILLS, SUBSKILLS, MathDomain
from dataenvgym.students.tiny import TinyLM


def calibrate(subskills: list[str], minutes: float, threshold: float, every: int, n_eval: int, seed: int) -> dict:
    dom = MathDomain(subskills)
    split = dom.splits(60_000, 0, n_eval * len(subskills), seed=seed)
    data = [Datum.from_task(t) for t in split['train']]
    student = TinyLM(seed=seed, steps=10**6)
    reached, curve, start = {}, [], time.perf_counter()

    class Done(Exception): pass

    def on_step(step: int, loss: float) -> None:
        if (step + 1) % every: return
        report = EvalReport.from_attempts(grade_all(dom, split['test'], student.predict(split['test'])))
        student.model.train()
        elapsed = (time.perf_counter() - start) / 60
        seen = (step + 1) * student.config.batch_size
        curve.append({'step': step + 1, 'minutes': round(elapsed, 2), 'loss': round(loss, 4),
                      'per_subskill': {k.split('/')[1]: round(v, 3) for k, v in report.per_subskill.items()}})
        for sub, acc in curve[-1]['per_subskill'].items():
            if acc >= threshold and sub not in reached:
                reached[sub] = {'examples': seen // len(subskills), 'minutes': round(elapsed, 2)}
        if len(reached) == len(subskills) or elapsed > minutes: raise Done

    try: student.fit(data, on_step=on_step, progress=False)
    except Done: pass
    final = curve[-1]['per_subskill'] if curve else {}
    table = {s: {**reached.get(s, {'examples': None, 'minutes': None}), 'final_accuracy': final.get(s)} for s in subskills}
    return {'threshold': threshold, 'minutes_budget': minutes, 'subskills': table, 'curve': curve,
            'batch_size': student.config.batch_size, 'threads': torch.get_num_threads()}


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--subskills', default='embedded', help="'embedded', 'full', or a comma-separated list")
    p.add_argument('--minutes', type=float, default=6.0)
    p.add_argument('--threshold', type=float, default=0.8)
    p.add_argument('--every', type=int, default=150, help='evaluate every N optimiser steps')
    p.add_argument('--n-eval', type=int, default=100, help='held-out tasks per subskill')
    p.add_argument('--seed', type=int, default=0)
    a = p.parse_args()
    subs = {'embedded': EMBEDDED_SUBSKILLS, 'full': list(SUBSKILLS)}.get(a.subskills) or a.subskills.split(',')
    print(json.dumps(calibrate(subs, a.minutes, a.threshold, a.every, a.n_eval, a.seed)))

"""How fast the embedded VQA student learns: validation accuracy per subskill while it trains on a fixed set of tasks.

    python benchmarks/vqa_student.py --network objects --per 1000 --steps 600 --every 300
    python benchmarks/vqa_student.py --network film --per 1000 --steps 1500 --every 300

Prints one JSON object: the settings, the parameter count, and for every `--every` steps the seconds so far, the
training loss and the validation accuracy (overall and per subskill). Compare networks on the same `--seed`.
"""
import argparse, json, sys, time
import torch
from dataenvgym.core import evaluate
from dataenvgym.domains.vqa import VQADomain
from dataenvgym.domains.vqa_images import vqa_datum
from dataenvgym.students.vqa import VQAStudent

PRESET_SUBSKILLS = 'color,shape,size,material,count_all'  # those of the vqa/embedded preset


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--network', default='objects', choices=['film', 'objects'])
    p.add_argument('--subskills', default=PRESET_SUBSKILLS, help='comma-separated VQA subskills')
    p.add_argument('--per', type=int, default=1000, help='training tasks per subskill')
    p.add_argument('--val', type=int, default=80, help='validation tasks per subskill')
    p.add_argument('--steps', type=int, default=600)
    p.add_argument('--every', type=int, default=300, help='evaluate every this many steps')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--threads', type=int, default=2)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    domain = VQADomain(a.subskills.split(','))
    n = len(domain.subskills)
    split = domain.splits(a.per * n, a.val * n, 0, seed=a.seed)
    student = VQAStudent(network=a.network, seed=a.seed, steps=a.steps)
    curve, t0 = [], time.perf_counter()
    def on_step(step: int, loss: float):
        if (step + 1) % a.every and step + 1 != a.steps: return
        rep = evaluate(student, split['val'], domain)
        curve.append({'step': step + 1, 'seconds': round(time.perf_counter() - t0, 1), 'loss': round(loss, 3),
                      'val_accuracy': round(rep.overall, 4),
                      'per_subskill': {k.split('/')[-1]: round(v, 3) for k, v in rep.per_subskill.items()}})
        print(curve[-1], file=sys.stderr, flush=True)
    student.fit([vqa_datum(t) for t in split['train']], on_step=on_step, progress=False)
    out = {**vars(a), 'parameters': student.num_parameters, 'curve': curve}
    print(json.dumps(out, indent=1))
    return out


if __name__ == '__main__':
    main()

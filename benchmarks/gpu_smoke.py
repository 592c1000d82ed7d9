"""One small real model per domain through its `paper/*` config, one iteration: seconds and peak memory, as JSON.

On a GPU machine, with the models in the Hugging Face cache (or folders: --model DOMAIN=FOLDER):

    python benchmarks/gpu_smoke.py                                    # math, code, tools, vqa on MODELS
    python benchmarks/gpu_smoke.py --domains vqa --set vqa:domain.val=/data/gqa/val_balanced_questions.json ...

On a CPU with tiny local models (how tests/test_real_scale.py runs it):

    python benchmarks/gpu_smoke.py --domains tools --model tools=/tmp/tiny-lm --cpu

Each domain runs `dataenvgym teach --config paper/DOMAIN/skill-list --iterations 1` in this process with a small model
in place of the paper's (MODELS, or --model), the config's own student settings (device cuda, bfloat16; --cpu: the CPU,
float32, short answers), the first --limit validation and test tasks, --budget items and --steps optimiser steps. The
LLM teacher modules are answered by the package's stand-in (`testing.StandInTeacher` behind a local `ScriptedServer`):
the smoke measures the student side and needs no key or network. The benchmark files are fixtures in the published
formats (`tests/test_real_scale.benchmark_files`), written under --out, unless `--set DOMAIN:domain.val=...` (and
test, images) names real ones. Prints one JSON object per domain and line: the exit status of `teach`, seconds, and
the peak memory in MB (the GPU's allocated peak on a GPU; else the process's peak resident memory so far).
"""
import argparse, contextlib, io, json, resource, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODELS = {'math': 'Qwen/Qwen2.5-0.5B-Instruct', 'code': 'Qwen/Qwen2.5-Coder-0.5B-Instruct',
          'tools': 'Qwen/Qwen2.5-0.5B-Instruct', 'vqa': 'google/paligemma-3b-pt-224'}
CPU = {'device': 'cpu', 'dtype': 'float32', 'max_new_tokens': 8, 'max_length': 256, 'predict_batch_size': 8}


def _pairs(items: list[str], what: str) -> dict[str, str]:
    "`DOMAIN=VALUE` flags as a dict; a malformed one is an error that says the form."
    out = {}
    for item in items:
        key, eq, value = item.partition('=')
        if not eq: sys.exit(f'gpu_smoke: {what} takes DOMAIN=VALUE, got {item!r}')
        out[key] = value
    return out


def argv_for(domain: str, model: str, files: dict, url: str, out: Path, a: argparse.Namespace) -> list[str]:
    "The `dataenvgym teach` arguments of one domain's smoke run."
    sets = {'teacher.llm.cache': 'null', 'budget': a.budget, 'domain.limit': a.limit, 'domain.split': 'files',
            'student.settings.steps': a.steps, 'student.settings.batch_size': 4,
            **{f'domain.{k}': v for k, v in files.items() if k != 'loader'},
            **({f'student.settings.{k}': v for k, v in CPU.items() if domain != 'vqa' or k != 'max_length'} if a.cpu else {})}
    for item in a.set:                                    # DOMAIN:KEY=VALUE, this domain's
        where, _, kv = item.partition(':')
        if where == domain: sets[kv.partition('=')[0]] = kv.partition('=')[2]
    return ['teach', '--config', f'paper/{domain}/skill-list', '--iterations', '1', '--out', str(out), '--json',
            '--student-model', model, '--llm-model', 'stand-in', '--llm-base-url', url,
            *[x for k, v in sets.items() for x in ('--set', f'{k}={v}')]]


def smoke(domain: str, model: str, a: argparse.Namespace) -> dict:
    "Run one domain; its exit status, seconds and peak memory."
    import torch
    from dataenvgym.cli import main
    from dataenvgym.registry import lookup
    from dataenvgym.teaching.llm import ScriptedServer
    from dataenvgym.testing import StandInTeacher
    sys.path.insert(0, str(HERE.parent / 'tests'))
    from test_real_scale import benchmark_files
    files, bank = benchmark_files(domain, Path(a.out) / 'data' / domain)
    if torch.cuda.is_available(): torch.cuda.reset_peak_memory_stats()
    teacher = StandInTeacher(lookup('preset', f'{domain}/tiny').make_domain(), bank=bank, seed=3)
    t0, err = time.perf_counter(), io.StringIO()
    with ScriptedServer(teacher) as srv, contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(err):
        code = main(argv_for(domain, model, files, srv.url, Path(a.out) / domain, a))
    seconds = time.perf_counter() - t0
    peak = (torch.cuda.max_memory_allocated() if torch.cuda.is_available()
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    res = json.loads(out.getvalue()) if code in (0, 1) and out.getvalue().strip() else {}
    return {'domain': domain, 'model': model, 'exit': code, 'seconds': round(seconds, 1), 'peak_memory_mb': round(peak / 2**20),
            'device': 'cuda' if torch.cuda.is_available() and not a.cpu else 'cpu',
            'test_accuracy_initial': res.get('test_accuracy_initial'), 'test_accuracy_last': res.get('test_accuracy_last'),
            **({'error': err.getvalue().strip().splitlines()[-1]} if code and err.getvalue().strip() else {})}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--domains', nargs='+', default=list(MODELS), choices=list(MODELS))
    p.add_argument('--model', nargs='*', default=[], metavar='DOMAIN=NAME', help='a hub name or local folder per domain')
    p.add_argument('--set', nargs='*', default=[], metavar='DOMAIN:KEY=VALUE', help="any config field of a domain's run")
    p.add_argument('--cpu', action='store_true', help='run on the CPU (float32, short answers), e.g. with tiny local models')
    p.add_argument('--limit', type=int, default=16, help='validation and test tasks each (default 16)')
    p.add_argument('--budget', type=int, default=8, help='items the teacher writes (default 8)')
    p.add_argument('--steps', type=int, default=4, help='optimiser steps per fit (default 4)')
    p.add_argument('--out', default='runs/gpu-smoke')
    a = p.parse_args(argv)
    models = {**MODELS, **_pairs(a.model, '--model')}
    failed = 0
    for domain in a.domains:
        row = smoke(domain, models[domain], a)
        print(json.dumps(row), flush=True)
        failed += row['exit'] != 0
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())

"""How much `dataenvgym eval repair --concurrency N` saves against a remote model: the same episodes against a stand-in
chat model on 127.0.0.1 that answers every request after a fixed delay, one episode at a time and N at a time.

    python benchmarks/eval_repair_speed.py --episodes 40 --delay 0.2 --concurrency 8 --json

Prints one JSON object: `episodes`, `delay_s`, `replies` (model calls per run), `seconds_serial`, `seconds_concurrent`,
`speedup` (serial / concurrent, measured in the same process one after the other) and `identical` (whether both runs
wrote the same episodes, timing aside). Each run plays into a fresh folder; the scripted baselines are left out (they
do not touch the model).
"""
import argparse, json, sys, tempfile, time
from pathlib import Path

from dataenvgym.llm import ChatModel
from dataenvgym.repair.llm_agent import LLMAgent, _read_rows, evaluate_llm
from dataenvgym.testing import scripted_repair_model


def timed_run(url: str, tasks: list[str], seeds: range, concurrency: int, mode: str) -> tuple[float, list[dict]]:
    with tempfile.TemporaryDirectory() as d:
        agent = LLMAgent(ChatModel(_config(url)), mode=mode)
        t0 = time.perf_counter()
        evaluate_llm(agent, tasks, seeds, d, concurrency=concurrency, baselines=(), progress=False)
        seconds = time.perf_counter() - t0
        rows = sorted(({k: v for k, v in r.items() if k != 'seconds'} for r in _read_rows(Path(d) / 'episodes.jsonl')),
                      key=lambda r: (r['task'], r['seed']))
    return seconds, rows


def _config(url: str):
    from dataenvgym.llm import LLMConfig
    return LLMConfig(model='stand-in', base_url=url)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--episodes', type=int, default=40, help='episodes a run (default 40)')
    p.add_argument('--delay', type=float, default=0.2, help='seconds the stand-in takes a reply (default 0.2)')
    p.add_argument('--concurrency', type=int, default=8, help='episodes in flight in the second run (default 8)')
    p.add_argument('--task', default='task_0_tutorial', help='the task (default task_0_tutorial)')
    p.add_argument('--mode', choices=['tools', 'text'], default='tools')
    p.add_argument('--json', action='store_true', help='print one JSON object')
    a = p.parse_args(argv)
    with scripted_repair_model(delay=a.delay) as srv:
        serial, rows1 = timed_run(srv.url, [a.task], range(a.episodes), 1, a.mode)
        n = len(srv.requests)
        concurrent, rows8 = timed_run(srv.url, [a.task], range(a.episodes), a.concurrency, a.mode)
    res = {'episodes': a.episodes, 'delay_s': a.delay, 'concurrency': a.concurrency, 'replies': n,
           'seconds_serial': round(serial, 2), 'seconds_concurrent': round(concurrent, 2),
           'speedup': round(serial / concurrent, 2), 'identical': rows1 == rows8}
    print(json.dumps(res) if a.json else '\n'.join(f'{k}: {v}' for k, v in res.items()))
    return 0 if res['identical'] else 1


if __name__ == '__main__':
    sys.exit(main())

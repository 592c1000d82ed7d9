"""Per-call overhead of the repair server against the in-process environment: median milliseconds of `reset` and
`step`, in process, over WebSocket (the typed client) and over HTTP (sessions), with the server in its own process on
127.0.0.1. Resets replay one seed, so every call after the first hits the calibration memo and the numbers are the
transport's cost plus a warm reset; steps are `help` (the cheapest command) and `inspect_dataset`.

    python benchmarks/serve_overhead.py [--n 30] [--out runs/serve_overhead.json]
"""
import argparse, json, os, socket, statistics, subprocess, sys, time
from pathlib import Path

import httpx

from dataenvgym.repair.env import RepairEnv
from dataenvgym.repair.serve import RepairClient, RepairCommand

COMMANDS = ('help', 'inspect_dataset')


def median_ms(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter(); fn(); times.append(time.perf_counter() - t)
    return round(1000 * statistics.median(times), 3)


def measure(reset, step, n: int) -> dict:
    reset()                                                     # cold: calibrates; not counted
    out = {'reset_ms': median_ms(reset, n)}
    for cmd in COMMANDS:
        reset()
        out[f'step_{cmd}_ms'] = median_ms(lambda: step(cmd), n)
    return out


def start_server() -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, '-m', 'uvicorn', 'dataenvgym.repair.serve:app', '--host', '127.0.0.1',
                             '--port', str(port), '--log-level', 'warning'], env={**os.environ, 'MAX_CONCURRENT_ENVS': '4'})
    url, deadline = f'http://127.0.0.1:{port}', time.time() + 120
    while True:
        try:
            if httpx.get(url + '/health', timeout=1).status_code == 200: return proc, url
        except httpx.HTTPError: pass
        if time.time() > deadline or proc.poll() is not None: proc.kill(); raise RuntimeError('the server did not start')
        time.sleep(0.2)


def main(n: int, out: Path | None) -> dict:
    env = RepairEnv()
    result = {'n': n, 'in_process': measure(lambda: env.reset(seed=3), lambda c: env.step(c), n)}
    proc, url = start_server()
    try:
        with RepairClient(base_url=url).sync() as client:
            result['websocket'] = measure(lambda: client.reset(seed=3), lambda c: client.step(RepairCommand(message=c)), n)
        with httpx.Client(base_url=url, timeout=60) as http:
            sid = http.post('/reset', json={'seed': 3}).json()['session_id']
            result['http'] = measure(lambda: http.post('/reset', json={'seed': 3, 'session_id': sid}).raise_for_status(),
                                     lambda c: http.post('/step', json={'session_id': sid, 'action': {'message': c}}).raise_for_status(), n)
    finally:
        proc.terminate(); proc.wait(30)
    base = result['in_process']
    result['overhead_ms'] = {t: {k: round(result[t][k] - base[k], 3) for k in base} for t in ('websocket', 'http')}
    if out:
        out.parent.mkdir(parents=True, exist_ok=True); out.write_text(json.dumps(result, indent=2) + '\n')
    return result


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--n', type=int, default=30)
    p.add_argument('--out', type=Path, default=None)
    a = p.parse_args()
    print(json.dumps(main(a.n, a.out), indent=2))

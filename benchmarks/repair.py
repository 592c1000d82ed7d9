"""Benchmark the data-repair environment's baseline agents.

    python benchmarks/repair.py --agents random,submit,heuristic,oracle --seeds 50 --start 0

Prints one JSON object: per task, `clean_accuracy` and `corrupted_accuracy` (held-out, mean over seeds), `fit_ms_median`
(one uncached retrain and held-out score: the model on the clean training rows) and, per agent, `success_rate`,
`mean_return`, `heldout_accuracy` and the speed of the agent's episodes.

The speed keys `episodes_per_s`, `steps_per_s` and `validate_ms_median` are *cold*: every memo is emptied before an
agent's seeds are played, so each reset generates its data, fits the model on the corrupted data and on the reference
repair, and every fix and validate runs (a user playing new seeds sees this). A validate of data already scored in the
same episode (at reset, when the agent's repair equals the reference repair) is still a cache hit, as it is for a user.
Resets are memoised by `(task, seed)` and fixes, facts and scores by the data's content, so the same seeds are then
replayed *warm* (what GRPO groups and repeated evaluations see): the same keys with `_warm`. The replay must reproduce
the cold trajectories exactly, or the benchmark fails.
"""
import argparse, json, statistics, sys, time
import numpy as np
from tqdm import tqdm
from dataenvgym.repair.agents import HeuristicAgent, OracleAgent, RandomAgent, SubmitAgent
from dataenvgym.repair.env import RepairEnv, calibrate, clear_caches, one_thread
from dataenvgym.repair.tasks import TASKS, Classifier

AGENTS = {'random': lambda seed: RandomAgent(seed), 'submit': lambda seed: SubmitAgent(),
          'heuristic': lambda seed: HeuristicAgent(), 'oracle': lambda seed: OracleAgent()}


def play(task: str, name: str, seeds: list[int]) -> tuple[list[tuple], dict]:
    "One episode per seed: the trajectories (commands, return, success, accuracy) and the pass's speed."
    env, episodes, steps, validate_ms = RepairEnv(task), [], 0, []
    t0 = time.perf_counter()
    for seed in tqdm(seeds, desc=f'{task} {name}', unit='episode', leave=False):   # on stderr: done/total, elapsed, ETA
        agent = AGENTS[name](seed)
        obs, ret = env.reset(seed=seed), 0.0
        agent.begin(env)
        while not obs.done:
            cmd = agent.act(obs)
            ts = time.perf_counter()
            obs = env.step(cmd)
            if cmd.strip().lower() == 'validate' and obs.metadata.get('error') is None:
                validate_ms.append(1000 * (time.perf_counter() - ts))
            ret += obs.reward or 0.0
        episodes.append((tuple(env.state.history), ret, bool(env.state.success), env.state.final_accuracy))
        steps += env.state.step_count
    secs = time.perf_counter() - t0
    return episodes, {'episodes_per_s': round(len(seeds) / secs, 2), 'steps_per_s': round(steps / secs, 1),
                      'validate_ms_median': round(statistics.median(validate_ms), 2) if validate_ms else None}


def run_agent(task: str, name: str, seeds: list[int]) -> dict:
    "The agent's numbers on `task`: outcomes, cold speed (the headline keys), warm speed (`_warm` keys)."
    clear_caches()
    cold, cold_speed = play(task, name, seeds)
    warm, warm_speed = play(task, name, seeds)
    if warm != cold: raise AssertionError(f'{task}/{name}: a replay differs from the first run (memoisation bug)')
    return {'success_rate': float(np.mean([e[2] for e in cold])), 'mean_return': round(float(np.mean([e[1] for e in cold])), 4),
            'heldout_accuracy': round(float(np.mean([e[3] for e in cold])), 4),
            **cold_speed, **{f'{k}_warm': v for k, v in warm_speed.items()}}


@one_thread
def task_accuracies(task: str, seeds: list[int]) -> dict:
    "Mean held-out accuracy of the model trained on the clean and on the corrupted data, and the uncached fit time."
    cals, clean, fit_ms = [calibrate(task, seed) for seed in seeds], [], []
    for c in cals:
        t0 = time.perf_counter()
        clean.append(Classifier(c.ep.test).score(c.ep.clean).accuracy)  # a fresh classifier: a real retrain and score
        fit_ms.append(1000 * (time.perf_counter() - t0))
    return {'clean_accuracy': round(float(np.mean(clean)), 4), 'corrupted_accuracy': round(float(np.mean([c.baseline for c in cals])), 4),
            'fit_ms_median': round(statistics.median(fit_ms), 2)}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--agents', default='random,submit,heuristic,oracle')
    p.add_argument('--seeds', type=int, default=50)
    p.add_argument('--start', type=int, default=0)
    p.add_argument('--tasks', default=','.join(TASKS))
    a = p.parse_args(argv)
    agents, seeds = [x.strip() for x in a.agents.split(',') if x.strip()], list(range(a.start, a.start + a.seeds))
    bad = [x for x in agents if x not in AGENTS]
    if bad: p.error(f'unknown agents {bad}; valid: {", ".join(AGENTS)}')
    out = {}
    for task in a.tasks.split(','):
        out[task] = task_accuracies(task, seeds)
        for name in agents:
            out[task][name] = run_agent(task, name, seeds)
            print(task, name, out[task][name], file=sys.stderr)
    print(json.dumps(out, indent=2))
    return out


if __name__ == '__main__':
    main()

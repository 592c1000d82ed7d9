"""Benchmark the data-repair environment's baseline agents.

    python benchmarks/repair.py --tasks task_4_expert --agents random,submit,reader,greedy,inspector,exhaustive,oracle --seeds 0:40 --json
    python benchmarks/repair.py --agents random,submit,heuristic,oracle --seeds 50 --start 0

With `--json` it prints `{"tasks": {TASK: {"clean_accuracy", "corrupt_accuracy", "agents": {AGENT: {"success",
"ci", "mean_return"}}}}}`: per task the mean held-out accuracy of the model trained on the clean and on the corrupted
rows, and per agent the success rate with its Wilson 95% interval and the mean return. `--seeds START:COUNT` names the
seeds. An agent is any name in `BASELINES` (random, submit, heuristic, reader, greedy, inspector, exhaustive,
oracle; the exhaustive agent plays with the `UNLIMITED` limits: no step budget, no validate cap) or a trained agent's run folder
(its `grpo` model, else its `sft` one, played greedily).

Without `--json` (the older report):

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
from pathlib import Path
from dataenvgym.stats import parse_seeds, proportion_ci
from dataenvgym.repair.env import UNLIMITED, RepairEnv, calibrate, clear_caches, _one_thread
from tqdm import tqdm
from dataenvgym.repair.tasks import TASKS, Classifier
from dataenvgym.repair.agents import BASELINES

AGENTS = BASELINES


def make_env(task: str, name: str) -> RepairEnv:
    "The environment an agent plays in: the exhaustive agent gets an unlimited budget (the observation-fair ceiling)."
    return RepairEnv(task, limits=UNLIMITED if name == 'exhaustive' else None)


def run_folder_agent(folder: str):
    "A factory of the trained agent saved in a run folder (its `grpo` model, else `sft`), played greedily."
    from dataenvgym.repair.rollouts import LMAgent
    from dataenvgym.repair.train import TrainConfig, load_agent
    root = Path(folder)
    path = next((root / n for n in ('grpo', 'sft') if (root / n).exists()), None)
    if path is None: raise SystemExit(f'{folder}: no grpo/ or sft/ model in this run folder')
    config = TrainConfig.load(root / 'config.yaml') if (root / 'config.yaml').exists() else TrainConfig()
    model, tok = load_agent(path, config)
    return lambda seed: LMAgent(model, tok)


def play(task: str, name: str, seeds: list[int]) -> tuple[list[tuple], dict]:
    "One episode per seed: the trajectories (commands, return, success, accuracy) and the pass's speed."
    env, episodes, steps, validate_ms = make_env(task, name), [], 0, []
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


@_one_thread
def task_accuracies(task: str, seeds: list[int]) -> dict:
    "Mean held-out accuracy of the model trained on the clean and on the corrupted data, and the uncached fit time."
    cals, clean, fit_ms = [calibrate(task, seed) for seed in seeds], [], []
    for c in cals:
        t0 = time.perf_counter()
        clean.append(Classifier(c.ep.test).score(c.ep.clean).accuracy)  # a fresh classifier: a real retrain and score
        fit_ms.append(1000 * (time.perf_counter() - t0))
    return {'clean_accuracy': round(float(np.mean(clean)), 4), 'corrupted_accuracy': round(float(np.mean([c.baseline for c in cals])), 4),
            'fit_ms_median': round(statistics.median(fit_ms), 2)}


def outcomes(task: str, name: str, make, seeds: list[int]) -> dict:
    "One pass of an agent over the seeds: its success rate, the Wilson 95% interval and the mean return."
    env, wins, returns = make_env(task, name), [], []
    for seed in seeds:
        agent, ret = make(seed), 0.0
        obs = env.reset(seed=seed)
        agent.begin(env)
        while not obs.done:
            obs = env.step(agent.act(obs))
            ret += obs.reward or 0.0
        wins.append(bool(env.state.success)); returns.append(ret)
    return {'success': round(float(np.mean(wins)), 4), 'ci': list(proportion_ci(sum(wins), len(wins))),
            'mean_return': round(float(np.mean(returns)), 4)}


def json_report(tasks: list[str], agents: dict, seeds: list[int]) -> dict:
    "The `--json` report: per task, clean and corrupted accuracy, and each agent's success, interval and return."
    out = {'tasks': {}, 'seeds': [seeds[0], len(seeds)]}
    for task in tasks:
        acc = task_accuracies(task, seeds)
        res = out['tasks'][task] = {'clean_accuracy': acc['clean_accuracy'], 'corrupt_accuracy': acc['corrupted_accuracy'],
                                    'agents': {}}
        for name, make in agents.items():
            res['agents'][name] = outcomes(task, name, make, seeds)
            print(task, name, res['agents'][name], file=sys.stderr, flush=True)
    return out


def seeds_arg(text: str, start: int) -> list[int]:
    "`--seeds`: a bare COUNT from `--start` (this benchmark's own older form), else what `stats.parse_seeds` reads."
    if text.isdigit() and int(text) >= 1: return list(range(start, start + int(text)))
    try: return parse_seeds(text)
    except ValueError as e: raise SystemExit(f'--seeds: {e}')


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--agents', default='random,submit,heuristic,oracle')
    p.add_argument('--seeds', default='50', help='COUNT (from --start) or START:COUNT')
    p.add_argument('--start', type=int, default=0)
    p.add_argument('--tasks', default=','.join(TASKS))
    p.add_argument('--json', action='store_true', help='print the compact report (success, ci, mean_return)')
    a = p.parse_args(argv)
    agents, seeds = [x.strip() for x in a.agents.split(',') if x.strip()], seeds_arg(a.seeds, a.start)
    tasks = [t.strip() for t in a.tasks.split(',') if t.strip()]
    if bad := [t for t in tasks if t not in TASKS]: p.error(f'unknown tasks {bad}; valid: {", ".join(TASKS)}')
    bad = [x for x in agents if x not in AGENTS and not Path(x).is_dir()]
    if bad: p.error(f'unknown agents {bad}; valid: {", ".join(AGENTS)} or a run folder')
    if a.json:
        makers = {x: AGENTS[x] if x in AGENTS else run_folder_agent(x) for x in agents}
        out = json_report(tasks, makers, seeds)
        print(json.dumps(out, indent=1))
        return out
    if folders := [x for x in agents if x not in AGENTS]: p.error(f'run folders {folders} need --json')
    out = {}
    for task in tasks:
        out[task] = task_accuracies(task, seeds)
        for name in agents:
            out[task][name] = run_agent(task, name, seeds)
            print(task, name, out[task][name], file=sys.stderr)
    print(json.dumps(out, indent=2))
    return out


if __name__ == '__main__':
    main()

"""Train the tiny agent on a data-repair task and compare it with the baselines on unseen seeds of every task.

    python benchmarks/train_agent.py --train-seeds 30 --eval-seeds 50 --grpo-steps 10 --threads 2
    python benchmarks/train_agent.py --config tiny-medium-hard --out runs/agent-medium-hard --threads 2
    python benchmarks/train_agent.py --config tiny-expert --eval-seeds 0:40 --out runs/agent-expert --json
    python benchmarks/train_agent.py --config cpu-grpo --eval-seeds 0:40 --out runs/cpu-grpo --json --control-sft

With `--config`, `--eval-seeds START:COUNT` replaces the config's evaluation seeds; a seed the recipe trained on
(warm-up, GRPO) or calibrated its tasks on is refused with an error. `--json` prints only the compact result:
`{"tasks": {TASK: {"trained": {"success"}, "sft": {"success"}, "demonstrator": {"success"}, "grpo_minus_sft":
{"mean", "lo", "hi"}, "baselines": {AGENT: {"success"}}}}}` (differences in points, 95% bootstrap interval, paired by
seed; the demonstrator is the recipe's first warm-up agent) with the reward curve and the timings; with a `decision`
in the recipe, `decision`: what GRPO's sampled episodes chose at each step and what each model chose on the held-out
seeds. `--control-sft` also trains the control: the SFT start trained on for as many further steps as GRPO took (a
step of `per_step × num_generations` warm-up chats, the warm-up's learning rate), evaluated on the same seeds
(`more_sft`, `grpo_minus_more_sft`): is the gain RL's, or more training's? A phase already finished in `--out` by the same recipe (its `config.yaml`; for GRPO, all its
steps logged) is reused, not retrained: rerunning with other evaluation seeds only evaluates.

With `--config` (a name in `TRAIN_CONFIGS` or a YAML/JSON file) it runs that config's recipe instead — `run_sft`,
`run_grpo`, `run_eval` into `--out`, the same phases as `dataenvgym train` — and prints the SFT and GRPO summaries,
the evaluation (`eval_summary` per task, `grpo_vs_sft` paired on the same seeds, `commands` per episode,
`divergence`: where the trained agent's failures leave the best scripted agent's path) and the
timings: seconds per GRPO step, and the environment's share of them (its steps, summed from the rollout log).

Records warm-up chats from the heuristic and oracle agents (seeds 0..train-seeds-1 of `--task`, successful episodes
only), runs the length check, SFT (TRL SFTTrainer, full fine-tuning), evaluates greedily on seeds 1000.. (never trained
on) of every `--eval-tasks` task (default: all four; the training task is always among them) beside the random,
heuristic and oracle agents, then runs GRPO (TRL GRPOTrainer, the environment in the loop) on seeds 200.. and evaluates
again. Prints one JSON object: the length report; on the training task, the success rates and mean returns per agent
after SFT (`trained`) and after GRPO (`trained+grpo`) and the must-show ratios (trained / heuristic success); `eval`,
the `eval_summary` of every evaluated task (success rate with a Wilson 95% interval, mean return and accuracy with
bootstrap intervals, each agent's paired difference from the heuristic); `grpo_vs_sft`, per task, the paired
difference of trained+grpo minus trained; and the wall time of each phase.
"""
import argparse, json, sys, time
from pathlib import Path
import numpy as np
import torch
from pydantic import ValidationError
from dataenvgym.repair.tasks import TASKS
from dataenvgym.stats import parse_seeds
from dataenvgym.lm import GRPOSettings, SFTSettings, grpo_train, length_report, save_agent, sft_train, tiny_agent
from dataenvgym.repair.demos import record_rollouts, warmup_dataset
from dataenvgym.repair.evaluation import eval_summary, evaluate_agent, paired_difference, success_rates
from dataenvgym.repair.rollouts import EnvRollouts
from dataenvgym.repair.train import TrainConfig, _decision_trace, load_agent, run_eval, run_grpo, run_sft


def config_for(name: str, threads: int, eval_seeds: str | None = None) -> TrainConfig:
    "The named (or file) config with the thread count and, if given, the evaluation seeds `START:COUNT` (re-validated)."
    config = TrainConfig.load(name).model_dump()
    if eval_seeds is not None:
        try: seeds = parse_seeds(eval_seeds)
        except ValueError as e: raise SystemExit(f'--eval-seeds: {e}')
        if seeds != list(range(seeds[0], seeds[-1] + 1)): raise SystemExit('--eval-seeds must be one range of seeds')
        config['eval_seeds'] = (seeds[0], seeds[-1] + 1)
    try: return TrainConfig.model_validate({**config, 'threads': threads})
    except ValidationError as e:   # one line: the validator's message, not pydantic's report
        raise SystemExit(f"{name}: " + '; '.join(err['msg'].removeprefix('Value error, ') for err in e.errors()))


def compact(res: dict) -> dict:
    "The `--json` result: per task trained and SFT success, GRPO - SFT in points (95% CI), the baselines' success."
    ev, tasks = res['eval'], {}
    for task, t in ev['tasks'].items():
        d = (ev.get('grpo_vs_sft') or {}).get(task) or {}
        lo, hi = d.get('success_diff_ci') or [None, None]
        pts = lambda x: None if x is None else round(100 * x, 1)
        demonstrator = res['config']['warmup_agents'][0]
        tasks[task] = {'trained': {'success': t['agents']['trained']['success']},
                       'sft': {'success': t['agents'].get('sft', {}).get('success')},
                       'demonstrator': {'agent': demonstrator,
                                        'success': t['agents'].get(demonstrator, {}).get('success')},
                       'grpo_minus_sft': {'mean': pts(d.get('success_diff')), 'lo': pts(lo), 'hi': pts(hi)},
                       'baselines': {a: {'success': s['success']} for a, s in t['agents'].items()
                                     if a not in ('trained', 'sft', 'more-sft')}}
        if 'more-sft' in t['agents']:
            c = res['more_sft'][task]
            tasks[task]['more_sft'] = {'success': t['agents']['more-sft']['success']}
            tasks[task]['grpo_minus_more_sft'] = {'mean': pts(c['success_diff']), 'lo': pts(c['success_diff_ci'][0]),
                                                  'hi': pts(c['success_diff_ci'][1])}
    extra = {'decision': {'grpo_steps': res['grpo'].get('decision'), 'held_out': ev['decision']}} if ev.get('decision') else {}
    return {**extra, 'tasks': tasks, 'grpo_reward': res['grpo']['reward'], 'grpo_level': res['grpo']['level'],
            'warmup_chats': res['sft']['chats'], 'decision_chats': res['sft'].get('decision_chats'),
            'timing': res['timing'], 'commands': ev.get('commands'),
            'divergence': ev.get('divergence')}


# What each phase depends on: a finished phase in `--out` is reused when these fields of its recorded config match.
EVAL_ONLY = {'eval_seeds', 'eval_on', 'baselines', 'threads', 'calibration_seeds', 'decision'}
GRPO_ONLY = {'grpo', 'grpo_seeds', 'curriculum', 'curriculum_window', 'curriculum_threshold', 'constrained',
             'success_bonus'}


def _recipe(config: dict, ignore: set) -> dict:
    return {k: v for k, v in config.items() if k not in ignore}


def reusable(config: TrainConfig, out: Path, phase: str) -> bool:
    "True when `out/phase` holds a saved model trained by this recipe (`config.yaml` and, for GRPO, its full log)."
    recorded = out / 'config.yaml'
    if not (out / phase / 'config.json').exists() or not recorded.exists(): return False
    ignore = EVAL_ONLY | (GRPO_ONLY if phase == 'sft' else set())
    same = _recipe(TrainConfig.load(recorded).model_dump(mode='json'), ignore) == _recipe(config.model_dump(mode='json'), ignore)
    if phase == 'grpo': same = same and len(_grpo_log(out)) == config.grpo.steps
    return same


def _grpo_log(out: Path) -> list[dict]:
    path = out / 'logs' / 'grpo.jsonl'
    rows = [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []
    return [r for r in rows if 'reward' in r]


def _grpo_seconds(out: Path) -> float:
    "The recorded wall time of a finished GRPO phase (else the sum of its logged step times)."
    f = out / 'logs' / 'grpo_seconds.txt'
    return float(f.read_text()) if f.exists() else sum(r.get('step_time', 0.0) for r in _grpo_log(out))


def reused(out: Path, phase: str) -> dict:
    "The summary of a finished phase read back from its run folder."
    if phase == 'sft':
        chats = len((out / 'warmup.jsonl').read_text().splitlines())
        return {'phase': 'sft', 'chats': chats, 'saved': str(out / 'sft'), 'reused': True}
    log, steps = [json.loads(l) for l in (out / 'logs' / 'rollouts.jsonl').read_text().splitlines()], _grpo_log(out)
    config = TrainConfig.load(out / 'config.yaml')
    return {'phase': 'grpo', 'steps': len(steps), 'episodes': len(log), 'saved': str(out / 'grpo'),
            'reward': [round(r['reward'], 4) for r in steps], 'level': log[-1]['level'] if log else None,
            **({'decision': _decision_trace(log, config.decision)} if config.decision else {}), 'reused': True}


def more_sft(config: TrainConfig, out: Path, progress: bool = False) -> dict:
    "The control: the SFT start trained on its warm-up chats for GRPO's number of steps (as many chats a step); reused."
    from datasets import Dataset
    done = out / 'more-sft' / 'config.json'
    g, t = config.grpo, time.perf_counter()
    settings = config.sft.model_copy(update={'max_steps': g.steps, 'batch_size': g.per_step * g.num_generations})
    if not (done.exists() and reusable(config, out, 'sft')):
        model, tok = load_agent(out / 'sft', config)
        chats = [json.loads(l) for l in (out / 'warmup.jsonl').read_text().splitlines()]
        trainer = sft_train(model, tok, Dataset.from_list([{'messages': c['messages']} for c in chats]), settings,
                            progress=progress)
        save_agent(trainer.model, tok, out / 'more-sft')
    model, tok = load_agent(out / 'more-sft', config)
    rows = evaluate_agent(model, tok, config.eval_tasks, range(*config.eval_seeds), (), name='more-sft',
                          max_turns=config.max_turns, max_length=config.sft.max_length, constrained=config.constrained)
    trained = [json.loads(l) for l in (out / 'eval.jsonl').read_text().splitlines()]
    (out / 'eval.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in trained + rows))
    return {'seconds': round(time.perf_counter() - t, 1), 'steps': settings.max_steps, 'batch_size': settings.batch_size,
            'rows': rows, **{task: paired_difference([r for r in trained if r['task'] == task and r['agent'] == 'trained'],
                                                      [r for r in rows if r['task'] == task])
                            for task in config.eval_tasks}}


def from_config(config: TrainConfig, out: str, control: bool = False) -> dict:
    "The config's recipe (SFT, GRPO, evaluation of both on the held-out seeds) with its timings; finished phases reused."
    res, t, out = {'config': config.model_dump(mode='json')}, time.perf_counter(), Path(out)
    keep_sft = reusable(config, out, 'sft')
    keep_grpo = keep_sft and reusable(config, out, 'grpo')
    # steps done/total, elapsed, ETA on a terminal
    res['sft'] = reused(out, 'sft') if keep_sft else run_sft(config, out, progress=sys.stderr.isatty())
    res['sft_seconds'] = round(time.perf_counter() - t, 1); t = time.perf_counter()
    if keep_grpo: res['grpo'] = reused(out, 'grpo')
    else:
        res['grpo'] = run_grpo(config, out, progress=sys.stderr.isatty())
        (out / 'logs' / 'grpo_seconds.txt').write_text(f'{time.perf_counter() - t:.1f}\n')
    grpo_seconds = _grpo_seconds(out) if keep_grpo else time.perf_counter() - t
    t = time.perf_counter()
    res['eval'] = run_eval(config, out)
    res['eval_seconds'] = round(time.perf_counter() - t, 1)
    if control:
        res['more_sft'] = more_sft(config, out, progress=sys.stderr.isatty())
        rows = res['more_sft'].pop('rows')
        for task in config.eval_tasks:
            res['eval']['tasks'][task]['agents']['more-sft'] = eval_summary(
                [r for r in rows if r['task'] == task], None)['tasks'][task]['agents']['more-sft']
    log = [json.loads(l) for l in (Path(out) / 'logs' / 'rollouts.jsonl').read_text().splitlines()]
    env_seconds, steps = sum(r['env_seconds'] for r in log), max(res['grpo']['steps'], 1)
    res['timing'] = {'sft_seconds': res['sft_seconds'], 'grpo_seconds': round(grpo_seconds, 1),
                     'grpo_seconds_per_step': round(grpo_seconds / steps, 2),
                     'env_seconds_per_step': round(env_seconds / steps, 2),
                     'env_share_of_grpo': round(env_seconds / grpo_seconds, 3), 'episodes': len(log),
                     'eval_seconds': res['eval_seconds'],
                     **({'more_sft_seconds': res['more_sft']['seconds']} if control else {})}
    return res


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--task', default='task_0_tutorial', choices=list(TASKS), help='the task trained on')
    p.add_argument('--eval-tasks', nargs='+', default=list(TASKS), choices=list(TASKS),
                   help='the tasks evaluated after SFT and after GRPO (default: all four)')
    p.add_argument('--train-seeds', type=int, default=30)
    p.add_argument('--eval-seeds', default=None, help='COUNT from 1000, or with --config START:COUNT')
    p.add_argument('--epochs', type=float, default=40)
    p.add_argument('--grpo-steps', type=int, default=10)
    p.add_argument('--grpo-lr', type=float, default=1e-4)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--config', help="run a TrainConfig's recipe (a name in TRAIN_CONFIGS or a file) instead")
    p.add_argument('--out', default=None, help='run folder for --config (default: runs/agent-<config>)')
    p.add_argument('--json', action='store_true', help='with --config: print the compact result only')
    p.add_argument('--control-sft', action='store_true',
                   help='with --config: also train and evaluate the SFT start for as many further SFT steps as GRPO took')
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    if a.config:
        config = config_for(a.config, a.threads, a.eval_seeds)
        res = from_config(config, a.out or f'runs/agent-{Path(a.config).stem}', control=a.control_sft)
        print(json.dumps(compact(res) if a.json else res, indent=1))
        return
    a.eval_seeds = int(a.eval_seeds or 50)
    eval_tasks = list(dict.fromkeys([a.task, *a.eval_tasks]))
    out, t = {'args': vars(a)}, time.perf_counter()
    model, tok = tiny_agent()
    ds = warmup_dataset(record_rollouts(seeds=range(a.train_seeds), tasks=a.task))
    out['warmup'] = {'chats': len(ds), 'length': length_report(ds, tok, 768), 'seconds': round(time.perf_counter() - t, 1)}
    t = time.perf_counter()
    sft = sft_train(model, tok, ds, SFTSettings(epochs=a.epochs), progress=sys.stderr.isatty())
    out['sft_seconds'] = round(time.perf_counter() - t, 1)
    out['sft_final_loss'] = [h['loss'] for h in sft.state.log_history if 'loss' in h][-1]
    seeds = range(1000, 1000 + a.eval_seeds)
    t = time.perf_counter()
    rows = evaluate_agent(sft.model, tok, eval_tasks, seeds)
    out['eval_seconds'] = round(time.perf_counter() - t, 1)
    t = time.perf_counter()
    rollouts = EnvRollouts(a.task, seeds=range(200, 300))
    grpo = grpo_train(sft.model, tok, rollouts, GRPOSettings(steps=a.grpo_steps, lr=a.grpo_lr), progress=sys.stderr.isatty())
    out['grpo_seconds'] = round(time.perf_counter() - t, 1)
    out['grpo_reward'] = [round(h['reward'], 4) for h in grpo.state.log_history if 'reward' in h]
    t = time.perf_counter()
    rows += [{**r, 'agent': 'trained+grpo'} for r in evaluate_agent(grpo.model, tok, eval_tasks, seeds, baselines=())]
    out['eval_after_grpo_seconds'] = round(time.perf_counter() - t, 1)
    on_task = [r for r in rows if r['task'] == a.task]
    rates = success_rates(on_task)
    out['success_rate'] = rates
    out['mean_return'] = {k: float(np.mean([r['return'] for r in on_task if r['agent'] == k])) for k in rates}
    out['sft_vs_heuristic'] = rates['trained'] / rates['heuristic']
    out['grpo_vs_heuristic'] = rates['trained+grpo'] / rates['heuristic']
    out['must_show'] = out['sft_vs_heuristic'] >= 0.8 and rates['trained+grpo'] >= rates['trained']
    out['eval'] = eval_summary(rows, reference='heuristic')
    out['grpo_vs_sft'] = {task: t['vs_reference']['trained+grpo']
                          for task, t in eval_summary(rows, reference='trained')['tasks'].items()}
    print(json.dumps(out, indent=1))


if __name__ == '__main__':
    main()

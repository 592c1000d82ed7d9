"""Train the tiny agent on the data-repair tutorial task and compare it with the baselines on unseen seeds.

    python benchmarks/train_agent.py --train-seeds 30 --eval-seeds 50 --grpo-steps 10 --threads 2

Records warm-up chats from the heuristic and oracle agents (seeds 0..train-seeds-1, successful episodes only), runs the
length check, SFT (TRL SFTTrainer, full fine-tuning), evaluates greedily on seeds 1000.. (never trained on) beside the
random, heuristic and oracle agents, then runs GRPO (TRL GRPOTrainer, the environment in the loop) on seeds 200.. and
evaluates again. Prints one JSON object: the length report, success rates and mean returns per agent after SFT and after
GRPO, the must-show ratios (trained / heuristic success), and the wall time of each phase.
"""
import argparse, json, time
import numpy as np
import torch
from dataenvgym.repair.train import (EnvRollouts, GRPOSettings, SFTSettings, evaluate_agent, grpo_train, length_report,
                              record_rollouts, sft_train, success_rates, tiny_agent, warmup_dataset)


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--task', default='task_0_tutorial')
    p.add_argument('--train-seeds', type=int, default=30)
    p.add_argument('--eval-seeds', type=int, default=50)
    p.add_argument('--epochs', type=float, default=40)
    p.add_argument('--grpo-steps', type=int, default=10)
    p.add_argument('--grpo-lr', type=float, default=1e-4)
    p.add_argument('--threads', type=int, default=2)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    out, t = {'args': vars(a)}, time.perf_counter()
    model, tok = tiny_agent()
    ds = warmup_dataset(record_rollouts(seeds=range(a.train_seeds), tasks=a.task))
    out['warmup'] = {'chats': len(ds), 'length': length_report(ds, tok, 768), 'seconds': round(time.perf_counter() - t, 1)}
    t = time.perf_counter()
    sft = sft_train(model, tok, ds, SFTSettings(epochs=a.epochs))
    out['sft_seconds'] = round(time.perf_counter() - t, 1)
    out['sft_final_loss'] = [h['loss'] for h in sft.state.log_history if 'loss' in h][-1]
    seeds = range(1000, 1000 + a.eval_seeds)
    t = time.perf_counter()
    rows = evaluate_agent(sft.model, tok, a.task, seeds)
    out['eval_seconds'] = round(time.perf_counter() - t, 1)
    t = time.perf_counter()
    rollouts = EnvRollouts(a.task, seeds=range(200, 300))
    grpo = grpo_train(sft.model, tok, rollouts, GRPOSettings(steps=a.grpo_steps, lr=a.grpo_lr))
    out['grpo_seconds'] = round(time.perf_counter() - t, 1)
    out['grpo_reward'] = [round(h['reward'], 4) for h in grpo.state.log_history if 'reward' in h]
    rows += [{**r, 'agent': 'trained+grpo'} for r in evaluate_agent(grpo.model, tok, a.task, seeds, baselines=())]
    rates = success_rates(rows)
    out['success_rate'] = rates
    out['mean_return'] = {k: float(np.mean([r['return'] for r in rows if r['agent'] == k])) for k in rates}
    out['sft_vs_heuristic'] = rates['trained'] / rates['heuristic']
    out['grpo_vs_heuristic'] = rates['trained+grpo'] / rates['heuristic']
    out['must_show'] = out['sft_vs_heuristic'] >= 0.8 and rates['trained+grpo'] >= rates['trained']
    print(json.dumps(out, indent=1))


if __name__ == '__main__':
    main()

"""Can GRPO move a trained agent's choice? GRPO on single decisions (`DecisionRollouts` of `decisions.py`), before and after.

    python experiments/repair-grpo-decisions/grpo_decisions.py --agent runs/agent-expert/sft --reward 'apply 1' --lr 1e-3 --steps 20
    python experiments/repair-grpo-decisions/grpo_decisions.py --agent runs/agent-expert/sft --reward episode --lr 3e-4 --steps 100
    python experiments/repair-grpo-decisions/grpo_decisions.py --agent runs/agent-expert/sft --reward episode --states all --episode-seeds 0:40
    python experiments/repair-grpo-decisions/grpo_decisions.py --agent runs/agent-expert/sft --rollouts branch --reward success --skip 1 \
        --per-step 8 --steps 60 --episode-seeds 0:40

The prompts are the observations a demonstrator (`--demonstrator`, the inspector by default) answered right after
`inspect_groups` on `--seeds` of `--task` (in its successful episodes, or with `--states all` in all of them: the
decisions where it failed are where another reply can do better than it), each alone; the agent answers once and
`--reward` scores the answer:
`episode` (the demonstrator plays on from it: the episode's return plus 1 for a success), `demonstrator` (1 for the
demonstrator's own command), a command such as `apply 1` (1 for that command: a control that GRPO should always
move) or `rescale-first` (a contextual control: 1 for `apply 1` where the site line's first fix is a rescale, for
`apply 2` elsewhere). Before and after the run, the agent answers every decision of `--eval-seeds` greedily (never trained on).

Prints one JSON object: the settings; `train_states` / `eval_states`; `before` / `after`, the mean `match` (the
reply is the demonstrator's command) and `reward` over the evaluation decisions; `after_minus_before`, their paired
differences (each seed's decisions averaged, then a 95% bootstrap interval over the `n` seeds: `mean`, `lo`, `hi`;
`match` in points, `reward` in the reward's units); `training`,
the mean reward of each step's sampled replies; `seconds_per_step` and `env_share` (the time spent replaying
episodes, `episode` reward only). With `--episode-seeds START:COUNT` it also plays whole episodes greedily before and
after, on those seeds, and adds `episodes`: success before, after, and the paired difference. With `--sft-baseline` it
also trains the same start by SFT on the same decisions, the demonstrator's answers as labels (as many examples and
steps, the same learning rate), and adds `sft`: its `after`, `after_minus_before`, and `grpo_minus_sft` (the match,
paired per seed as above); with `--states all` those labels include its answers in the episodes it failed.

With `--rollouts branch` GRPO trains on `BranchRollouts` (`decisions.py`) instead: each `--seeds` episode is played by
the agent greedily, and its group replays it up to one of the agent's own decisions after `inspect_groups` (the
first `--skip` of them left out), samples a reply there in the agent's context and plays on greedily; `--reward` is
`episode` or `success` (1 for a success). `train_states` is then the number of seeds; the evaluation decisions are
scored with the `episode` reward; `training` adds `own_success`, the greedy success of each step's seeds before the
step (the policy on seeds it had not yet trained on, unless drawn again).
"""
import argparse, json, sys, time
from collections import defaultdict
import numpy as np
import torch
from dataenvgym.stats import bootstrap_ci, parse_seeds
from dataenvgym.lm import GRPOSettings, SFTSettings, grpo_train, save_agent, sft_train
from dataenvgym.repair.agents import BASELINES
from dataenvgym.repair.evaluation import evaluate_agent, paired_difference
from dataenvgym.repair.rollouts import _command_replies
from dataenvgym.repair.tasks import TASKS
from dataenvgym.repair.train import TrainConfig, load_agent
from decisions import BranchRollouts, DecisionRollouts     # beside this script (its folder is on sys.path)


def rescale_first(observation: str, reply: str) -> float:
    "The contextual control: `apply 1` where the first fix listed is a rescale, `apply 2` elsewhere."
    return float(reply.lower().split() == ['apply', '1' if observation.startswith('fixes: 1 rescale') else '2'])


RULES = {'rescale-first': rescale_first}


def seed_range(text: str, flag: str) -> list[int]:
    "The seeds of a flag (`stats.parse_seeds`: `0-9`, or the older `START:COUNT`), or exit naming the flag."
    try: return parse_seeds(text)
    except ValueError as e: raise SystemExit(f'{flag}: {e}')


def per_seed_difference(after: list[dict], before: list[dict], key: str, scale: float = 1.0) -> dict:
    "Mean of `after - before` (times `scale`) over the evaluation decisions, averaged per seed first, with a 95% CI."
    by_seed = defaultdict(list)
    for a, b in zip(after, before): by_seed[a['seed']].append(float(a[key]) - float(b[key]))
    diffs = [scale * float(np.mean(v)) for v in by_seed.values()]
    lo, hi = bootstrap_ci(diffs, digits=3) or (None, None)
    return {'mean': round(float(np.mean(diffs)), 3), 'lo': lo, 'hi': hi, 'n': len(diffs)}


def means(rows: list[dict]) -> dict:
    return {k: round(float(np.mean([float(r[k]) for r in rows])), 4) for k in ('match', 'reward')}


def sft_baseline(a, config: TrainConfig, rollouts: DecisionRollouts, evaluation: DecisionRollouts,
                 before: list[dict], grpo_after: list[dict]) -> dict:
    "SFT of the start on GRPO's decisions with the demonstrator's answers: as many examples and steps, the same lr."
    from datasets import Dataset
    model, tok = load_agent(a.agent, config)
    chats = Dataset.from_list([{'messages': [*p, {'role': 'assistant', 'content': rollouts.state_of(p)[2]}]}
                               for p in rollouts.dataset['prompt']])
    t0 = time.perf_counter()
    settings = SFTSettings(max_steps=a.steps, batch_size=a.per_step * a.num_generations, lr=a.lr, warmup=0.0,
                           max_length=a.max_length)
    trained = sft_train(model, tok, chats, settings).model
    seconds = time.perf_counter() - t0
    after = evaluation.evaluate(trained, tok)
    return {'after': means(after), 'after_minus_before': {'match': per_seed_difference(after, before, 'match', 100),
                                                          'reward': per_seed_difference(after, before, 'reward')},
            'grpo_minus_sft': {'match': per_seed_difference(grpo_after, after, 'match', 100)},
            'seconds_per_step': round(seconds / a.steps, 2)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--agent', required=True, help='a saved agent folder (e.g. a run\'s sft/)')
    p.add_argument('--task', default='task_4_expert', choices=list(TASKS))
    p.add_argument('--demonstrator', default='inspector', choices=list(BASELINES))
    p.add_argument('--reward', default='episode', help="episode, demonstrator, a command such as 'apply 1', or rescale-first")
    p.add_argument('--seeds', default='2100:300', help='training decisions: START:COUNT')
    p.add_argument('--eval-seeds', default='0:100', help='evaluation decisions: START:COUNT')
    p.add_argument('--episode-seeds', default=None, help='also play whole episodes on START:COUNT')
    p.add_argument('--steps', type=int, default=100)
    p.add_argument('--lr', type=float, default=3e-4)
    p.add_argument('--beta', type=float, default=0.0)
    p.add_argument('--temperature', type=float, default=1.0)
    p.add_argument('--per-step', type=int, default=16)
    p.add_argument('--num-generations', type=int, default=8)
    p.add_argument('--max-length', type=int, default=3072)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--out', default=None, help='save the trained agent here')
    p.add_argument('--states', default='successful', choices=('successful', 'all'),
                   help="prompts from the demonstrator's successful episodes, or from all (its failures too)")
    p.add_argument('--rollouts', default='decisions', choices=('decisions', 'branch'),
                   help="single demonstrator decisions, or one of the agent's own decisions in its episode")
    p.add_argument('--skip', type=int, default=0, help='with --rollouts branch: site-report decisions left out')
    p.add_argument('--sft-baseline', action='store_true',
                   help="also SFT the start on the same decisions (the demonstrator's answers) and compare")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    train, held = seed_range(a.seeds, '--seeds'), seed_range(a.eval_seeds, '--eval-seeds')
    if set(train) & set(held): raise SystemExit('--seeds and --eval-seeds overlap: evaluate on seeds not trained on')
    if a.rollouts == 'branch' and (a.reward not in ('episode', 'success') or a.sft_baseline):
        raise SystemExit('--rollouts branch takes --reward episode or success, and no --sft-baseline')
    if a.rollouts == 'decisions' and a.reward not in ('episode', 'demonstrator', *RULES, *_command_replies(a.task)):
        raise SystemExit(f"--reward is episode, demonstrator, a command of {a.task} (such as 'apply 1') or "
                         f"{', '.join(RULES)}; got {a.reward!r}")
    try:
        reward = 'episode' if a.rollouts == 'branch' else RULES.get(a.reward, a.reward)
        decisions = lambda seeds: DecisionRollouts(a.task, seeds, a.demonstrator, reward=reward, states=a.states,
                                                   max_length=a.max_length)
        evaluation = decisions(held)
        rollouts = (BranchRollouts(a.task, train, skip=a.skip, reward=a.reward, max_length=a.max_length)
                    if a.rollouts == 'branch' else decisions(train))
    except ValueError as e: raise SystemExit(str(e))
    config = TrainConfig(sft=SFTSettings(max_length=a.max_length))
    model, tok = load_agent(a.agent, config)
    episodes = seed_range(a.episode_seeds, '--episode-seeds') if a.episode_seeds else None
    play = lambda m: evaluate_agent(m, tok, [a.task], episodes, (), max_turns=24, max_length=a.max_length,
                                    constrained=True)
    before = evaluation.evaluate(model, tok)
    episodes_before = play(model) if episodes else None
    t0 = time.perf_counter()
    settings = GRPOSettings(steps=a.steps, num_generations=a.num_generations, per_step=a.per_step, lr=a.lr,
                            beta=a.beta, temperature=a.temperature)
    trained = grpo_train(model, tok, rollouts, settings).model
    seconds = time.perf_counter() - t0
    after = evaluation.evaluate(trained, tok)
    steps = defaultdict(list)
    for r in rollouts.log: steps[r['step']].append(r['reward'])
    out = {'agent': a.agent, 'task': a.task, 'demonstrator': a.demonstrator, 'reward': a.reward, 'states': a.states,
           'rollouts': a.rollouts, 'skip': a.skip,
           'steps': a.steps, 'lr': a.lr, 'beta': a.beta, 'temperature': a.temperature,
           'train_states': len(rollouts.dataset), 'eval_states': len(evaluation.dataset),
           'before': means(before), 'after': means(after),
           'after_minus_before': {'match': per_seed_difference(after, before, 'match', 100),
                                  'reward': per_seed_difference(after, before, 'reward')},
           'training': {'reward': [round(float(np.mean(v)), 4) for _, v in sorted(steps.items())]},
           'seconds_per_step': round(seconds / a.steps, 2),
           'env_share': round(sum(r['env_seconds'] for r in rollouts.log) / seconds, 4)}
    if a.rollouts == 'branch':   # each step's seeds once: their greedy episode before the step
        own = defaultdict(dict)
        for r in rollouts.log: own[r['step']][r['seed']] = r['own_success']
        out['training']['own_success'] = [round(float(np.mean(list(v.values()))), 4) for _, v in sorted(own.items())]
    if episodes:
        episodes_after = play(trained)
        d = paired_difference(episodes_after, episodes_before)
        pts = lambda x: round(100 * x, 1)
        out['episodes'] = {'seeds': [episodes[0], len(episodes)],
                           'before': float(np.mean([r['success'] for r in episodes_before])),
                           'after': float(np.mean([r['success'] for r in episodes_after])),
                           'after_minus_before': {'mean': pts(d['success_diff']),
                                                  'lo': pts(d['success_diff_ci'][0]),
                                                  'hi': pts(d['success_diff_ci'][1]), 'n': d['n']}}
    if a.sft_baseline: out['sft'] = sft_baseline(a, config, rollouts, evaluation, before, after)
    if a.out: save_agent(trained, tok, a.out)
    print(json.dumps(out))


if __name__ == '__main__':
    sys.exit(main())

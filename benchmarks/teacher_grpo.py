"""Train a teacher LM on a SKILL-LIST math setup (SFT on the procedural policies' plans, then GRPO with the
validation gain as the reward) and compare it with its SFT start, the best fixed plan, the with-state heuristic, the
no-state control and the per-seed oracle on held-out seeds, paired, with bootstrap 95% intervals.

    python benchmarks/teacher_grpo.py --eval-seeds 0-11 --out DIR --json     # the default setup, math/missing-skill: train into DIR (or reuse the run there), evaluate
    python benchmarks/teacher_grpo.py --setup math/undertrained-seed --eval-iterations 1 --warmup-iterations 1 \
        --grpo-iterations 1 --no-oracle --eval-seeds 0-9 --out DIR --json   # the runs measured below (issue 37)
    python benchmarks/teacher_grpo.py --setup tiny --train-seeds 1000-1003 --eval-seeds 0-1 --grpo-steps 1 --sft-steps 20   # a smoke run

The default setup is `math/missing-skill` (issue 67): its seed students differ per seed (each lacks one of three
skills and has mastered the other two), its episodes have two iterations, and the warm-up and GRPO see both (`--warmup-iterations`,
`--grpo-iterations`: iteration 1 reached by the first warm-up policy's plan, the with-state heuristic). Evaluation
plays whole episodes of the setup's iterations (`--eval-iterations 0`). Besides the teachers it plays a family of
fixed plans on every held-out seed (each skill alone, each pair evenly, all evenly: `plan_family`) and takes, per
seed, the best of them with hindsight as the `oracle` (an upper bound on what reading the student can buy with such
plans; `--no-oracle` skips it). `--json` prints `grpo_minus_sft`, `grpo_minus_best_fixed`, `grpo_minus_with_state`,
`grpo_minus_no_state`, `grpo_minus_oracle`, `oracle_minus_best_fixed` (each `{mean, lo, hi, n}`: test gain, points,
paired by seed, bootstrap 95% CI), `n_seeds`, `setup`, `best_fixed` and the settings. A finished run in `--out` is
reused with its own training seeds and setup, whatever the flags say. Not yet measured on `math/missing-skill`
(its calibration, oracle − best fixed +8.3 [+5.7, +11.9] on seeds 1000–1011, is in `experiments/teacher-reads-student/`).

Since issue 37, GRPO plays each step's group of plans with the fast step (`teaching.fast.GroupStep`: the group's
students trained as one batched model from the cached seed student, common random numbers, teacher-forced grading;
its fit is `--fast-fit` over `teaching.fast.FAST_FIT`); `--reference-step` plays them one at a time with
`TeachingEnv.step` as before. After GRPO, the best fixed plan (every split of the budget in quarters, each played with
the fast step on every training seed; the best mean) joins the evaluation as the `best-fixed` teacher. A finished run
in `--out` (its `run.json` and `models/`) is reused: only the evaluation runs again. Evaluation refuses, with a clear
error, any seed of the run's training seeds or of the calibration seeds 1000-1099.

Phases (all on `--threads` torch threads, seeds explicit):
1. warm-up: `record_plans` of the `--warmup-policies` (with-state and no-state) on `--train-seeds` (iteration 0 and, with
   `--warmup-iterations 2`, iteration 1 reached by the with-state plan), as chats; SFT (`sft_train`, `--sft-steps`);
2. GRPO (`grpo_train` with `FastPlanRollouts`, or `PlanRollouts` with `--reference-step`): each step `--per-step`
   training seeds × `--num-generations` plans, each plan played from its seed student and paid its validation gain (or
   the penalty for a refused plan); then the best fixed plan's search;
3. evaluation (`evaluate_teachers`) of grpo, sft, with-state, no-state and best-fixed on `--eval-seeds` (disjoint from the training
   seeds; checked): whole episodes, test gain of the best-on-validation iteration and validation gain; the language
   models play greedily (with `--eval-sampled` also sampling, seeded by the episode), a refused reply is played as the
   no-state control's plan and counted (`invalid_replies`).

Replies are decoded under the plan's grammar (`PlanGrammar`: the model writes the numbers) and plans over the budget
are scaled down to it (`fit_budget`); `--free` restores free decoding and refusals.

Prints one JSON object: the settings, the timings (seconds per teaching-environment step, measured on the GRPO
completions; seconds per GRPO step; SFT and evaluation wall time), the reward curve (mean reward per GRPO step), the
share of refused plans per GRPO step, the budget share of each skill per step, and `report` (`teacher_report`: each teacher's mean gains with 95% CIs, and
grpo minus each other teacher, paired, on test and validation; with `--eval-sampled` also `report_sampled`). Everything is
also written under `--out`: the reward curve (`reward_curve.png`), both models (`models/`), the logs and episodes.

Measured on this project's 2-core machine, two torch threads, nothing else running (2026-12-04, the defaults of
then, the second command above): warm-up 480 s (32 chats; it trains the 16 training seed students), SFT 400 steps
77 s (loss 4.52 → 0.03), GRPO 160 steps × 8 plans on the fast step 1,537 s: 9.6 s per GRPO step, 0.87 s per plan
(1,280 plans, none refused, the environment 72% of a step); the best fixed plan's search 794 s (`addition:500;
subtraction:500`); evaluation 5 teachers × 10 seeds about 45 min (30-60 s an episode). GRPO's samples left the
warm-up's mixture (41/23/22/14% addition/subtraction/multiplication/fractions at step 0) for addition and subtraction
only by step 30, about 60/40 from step 110; its greedy reply on the held-out seeds: `addition:636; fractions:6;
multiplication:6; subtraction:352` on nine of ten. Held out (test gain, points, bootstrap 95% CIs, paired by seed):
grpo +10.6 [+5.9, +15.8], sft +4.4 [+1.5, +8.8], with-state +6.8 [+2.6, +12.3], no-state +2.5 [+0.3, +7.3], best-fixed
+11.3 [+7.4, +16.6]; **grpo − sft +6.1 [+3.1, +10.5]** (validation +7.2 [+4.0, +11.0]), grpo − with-state +3.7 [+0.8,
+8.9], grpo − no-state +8.1 [+4.9, +11.8], grpo − best-fixed −0.8 [−2.7, +1.3]: GRPO found a fixed plan about as good
as the searched one, not a use of the state. The same run evaluated again on seeds 10-19 (`--eval-seeds 10-19`,
reusing it; 32 min): grpo +9.8 [+6.8, +14.8], sft +4.1 [+1.9, +6.9], with-state +7.1 [+3.4, +12.6], no-state +4.1 [+1.4,
+8.2], best-fixed +10.6 [+6.8, +16.1]; grpo − sft +5.7 [+1.8, +8.7], grpo − with-state +2.7 [+1.4, +4.2], grpo −
no-state +5.7 [+4.4, +7.2], grpo − best-fixed −0.8 [−2.0, +0.5].

The same command again from an empty folder after the fast step got faster (packed batches, faster tokenizer and
grader; every reward the same to 1e-6 on replayed groups; 2026-12-04 evening, nothing else running, 61 min in all):
warm-up 469 s, SFT 72 s (the same model: its first six GRPO steps logged the same plans and rewards as the run above),
GRPO 1,049 s: **6.55 s per GRPO step, 0.67 s per plan** (the environment 82% of a step); best fixed plan search 455 s
(`addition:500; subtraction:500` again). GRPO's trajectory parted from the first run's by step 10 (a reward's last
digits differ, and sampling is chaotic): its samples collapsed onto `addition:94; fractions:81; multiplication:9;
subtraction:816` at step 40 (all eight the same), left it by step 45, and ended on `addition:461; fractions:5;
multiplication:4; subtraction:530`. Held out (seeds 0-9): grpo +11.8 [+7.5, +17.4], sft +4.4 [+1.5, +8.8], with-state
+6.8 [+2.6, +12.2], no-state +2.5 [+0.3, +7.3], best-fixed +11.3 [+7.4, +16.6]; **grpo − sft +7.4 [+4.5, +11.5]**
(validation +8.2 [+4.6, +13.6]), **grpo − with-state +5.0 [+1.9, +9.4]** (validation +3.7 [+0.2, +8.6]), grpo − no-state
+9.4 [+6.3, +12.4], grpo − best-fixed +0.5 [−0.5, +2.2].

Before issue 37, on `TeachingEnv.step` (2026-12-02):
- the defaults of then, `--eval-sampled` (32 warm-up chats; SFT loss 4.52 → 0.03, 38 s; GRPO 16 steps × 1 seed × 4 plans, lr 1e-3,
  under the plan's grammar): nothing else running, 12.36 s per teaching-environment step (64 plans, none refused), 53.5 s
  per GRPO step (the environment 92% of it), evaluation of 4 teachers × 10 seeds 774 s. A second run (with light work
  beside it: 15.1 s and 65.4 s) gave the same 64 training plans and rewards and the same evaluation. Reward per step
  (points) 7.5, 13.8, 9.3, 13.1, 1.8, 0.9, 18.1, 13.4, 3.9, 2.0, 10.0, 4.4, 3.5, 5.1, 4.9, 7.9 — each step another seed
  student; the budget shares show GRPO's samples leaving the warm-up's plans (40-48% addition, 27-37% subtraction) for
  one plan, 12% addition and 88% subtraction, from step 6 on. Held out (seeds 0-9, one iteration, test gain in points,
  bootstrap 95% CIs): grpo +10.6 [+6.7, +14.2], sft +10.6 [+6.7, +14.2], grpo@0.7 +9.2 [+5.4, +13.4], sft@0.7 +9.2
  [+5.4, +13.4], with-state +6.8 [+2.6, +12.2], no-state +2.5 [+0.3, +7.3]. grpo − sft 0.0 [0.0, 0.0] and grpo@0.7 −
  sft@0.7 0.0 [0.0, 0.0], test and validation: both models wrote the same reply on every held-out seed
  (`addition:516; fractions:10; multiplication:10; subtraction:3900`, scaled to 117/2/2/879). grpo − with-state +3.7
  [+1.1, +8.6] test, +1.9 [-0.9, +5.3] validation; grpo − no-state +8.1 [+5.3, +11.3], +7.8 [+6.2, +10.1].
- `--temperature 1.5` (fresh seed-student cache, GRPO 92.8 s per step, 21.6 s per environment step, 54.7 min in all):
  the groups now differed (e.g. step 2: -8.5, +10.0, +8.0, -3.0 points), but the greedy replies of GRPO and its SFT
  start were still the same on every held-out seed: grpo = sft +9.3 [+5.5, +12.9], grpo − sft 0.0 [0.0, 0.0], grpo −
  with-state +2.5 [-2.2, +7.4] (test), grpo − no-state +6.9 [+4.0, +10.3]. 16 steps did not move an argmax.
- `--warmup-policies no-state` (a weaker start): SFT memorised each training seed's plan, and at temperature 0.7 all
  four samples of a group were the same plan (steps 0 and 1: rewards 5.5 × 4 and 10.0 × 4): no spread, no gradient.
  Stopped after two steps.

Earlier runs decoded freely and refused plans over the budget (what `--free` does now); the `small` ones ran on one
torch thread with another job on the other core:
- `--setup small --free --train-seeds 1000-1019 --eval-seeds 0-11 --warmup-iterations 2 --per-step 2 --grpo-steps 20
  --grpo-lr 3e-4 --threads 1 --eval-iterations 0` (17 distinct first observations; 80 warm-up chats; SFT 400 steps, loss 4.51 → 0.17,
  48 s; GRPO 20 steps × 2 seeds × 4 plans, lr 3e-4): 4.17 s per teaching-environment step (126 plans taken), 29.4 s per
  GRPO step (the environment 89% of it); evaluation of 4 teachers × 12 held-out seeds (0-11) 609 s. Held-out test gain
  in points (mean, bootstrap 95% CI): grpo +1.6 [+0.5, +3.2], sft +1.6 [+0.5, +3.2], with-state +4.5 [+2.8, +6.0],
  no-state +2.7 [+1.2, +4.6]; grpo − sft 0.0 [0.0, 0.0] (greedy, the two models wrote the same plans on every seed),
  grpo − with-state −2.9 [−4.5, −1.5], grpo − no-state −1.1 [−2.5, +0.8]; 7 of 24 greedy replies of each model were
  refused (over the budget or a misspelt skill) and played as the no-state plan. The reward curve is flat noise
  (per-step mean between −0.044 and +0.061; 0–50% of plans refused per step).
- `--grpo-lr 2e-3 --num-generations 8 --per-step 1`: one step, then every plan refused (the model wrote `actraction:79`);
  with every reward the penalty a group has no spread, so GRPO has no gradient and stays there.
- `--grpo-lr 6e-4` (same group shape): valid plans until about step 8, then misspelt skill names (`subtration`) in every
  plan from step 10 on — the same dead end.
- `--grpo-steps 40 --num-generations 8 --per-step 1` (lr 3e-4): 3.68 s per environment step (250 plans taken), 25.8 s
  per GRPO step (the environment 89%); mean reward of the first ten steps +0.003, of the last ten −0.004; refused plans
  22% → 14%. Held-out (seeds 0-11, the with-state and no-state episodes of the first run reused): grpo +2.7 [+1.5, +3.7],
  sft +2.7 [+1.5, +3.7]; grpo − sft 0.0 [0.0, 0.0] (same greedy plans again: GRPO moved the weights by about 1e-3, not
  enough to change an argmax), grpo − with-state −1.8 [−4.1, −0.2] (test), −2.2 [−5.9, +0.1] (validation), grpo −
  no-state 0.0 [−2.2, +1.6]; 2 of 24 greedy replies refused. The SFT start's greedy plans differed from the first run's
  (same warm-up file, same loss curve to four digits): compare teachers within one run.
- In math/undertrained-seed, where one step tells plans apart (`plan_rewards.py`: spread 17 points, noise 4), two torch threads,
  nothing else running (2026-12-02): `--free --train-seeds 1000-1005 --warmup-iterations 2 --grpo-steps 14`: 24 warm-up
  chats, SFT loss 4.51 -> 0.03; 14.7 s per environment step, 17.5 s per GRPO step. GRPO paid -0.6, +7.5, -6.6, -0.9
  points over its first four steps, moving plans toward addition and subtraction (the best plan, +16.5, gave them 840 of
  1,000), until they overshot the budget (`addition:427; fractions:97; multiplication:97; subtraction:486`, 1,107):
  from step 4 on every plan was refused, the group's rewards were all the penalty, and the text degenerated. Held out
  (seeds 0-9, one iteration): every greedy reply of both models was refused, even the SFT start's, so grpo = sft =
  the no-state control, +3.2 [+1.8, +5.3]; with-state +5.4 [+3.3, +9.4]. The budget is a cliff in the reward.
- The same with plans over the budget scaled down to it but still decoded freely (16 training seeds, one warm-up
  iteration): the cliff was gone, the spelling went instead — from the third GRPO step on the samples misspelt the skills
  (`aditition:12`, `sulipltions:109`), and every plan of steps 2, 4, 5 and 9 was refused. Stopped after 11 steps. Hence
  the grammar.
- `--beta 0.04` with the config-built tiny model stops with a clear error when GRPO starts (TRL loads the reference model by
  name, and a config-built model has none): save the SFT model and load it back from its folder first.
"""
import argparse, copy, json, time
from pathlib import Path

import datasets
import matplotlib
import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from dataenvgym.registry import make
from dataenvgym.lm import GRPOSettings, SFTSettings, grpo_train, save_agent, sft_train, tiny_agent
from dataenvgym.teaching.fast import _GRADES, FastPlanRollouts, _GroupStep
from dataenvgym.stats import difference_interval, paired_difference, parse_seeds
from dataenvgym.teaching.policies import SkillListRandom, SkillListTeacher, allocate
from dataenvgym.teaching.train import (FixedReply, LMTeacher, PlanRollouts, evaluate_teachers, plan_chats, _plan_shares,
                                       record_plans, report_table, reward_curve, teacher_env, teacher_report)

CALIBRATION_SEEDS = range(1000, 1100)     # teacher_speed.py, plan_rewards.py and the fast step's settings were tuned here


def fixed_plans(skills: list[str], budget: int, quarters: int = 4) -> list[str]:
    "Every split of the budget in steps of 1/`quarters` over `skills` (plans of zero examples left out)."
    def splits(k, n):
        if k == 1: yield (n,); return
        for i in range(n + 1): yield from ((i,) + r for r in splits(k - 1, n - i))
    return ['; '.join(f'{s}:{budget * q // quarters}' for s, q in zip(skills, qs) if q) for qs in splits(len(skills), quarters)]


def best_fixed_plan(env, seeds: list[int], group_size: int, fit: dict | None, grade: str = 'answer_prob') -> tuple[str, dict]:
    "The fixed plan of `fixed_plans` with the best mean fast-step reward over the training `seeds`, and every plan's mean."
    obs = env.reset(seed=seeds[0])
    plans, group, rewards = fixed_plans(sorted(obs.per_skill), obs.budget), _GroupStep(env, fit, grade=grade), {}
    for seed in seeds:
        for s in range(0, len(plans), group_size):
            for r in group.play(seed, plans[s:s + group_size]): rewards.setdefault(r['plan'], []).append(r['reward'])
    means = {p: round(100 * float(np.mean(v)), 2) for p, v in rewards.items()}
    return max(means, key=means.get), means


def plan_family(skills: list[str], budget: int) -> dict[str, str]:
    "The per-seed oracle's plans: each skill alone, each pair evenly, all evenly (as `allocation_bound.py`), by name."
    weights = [{s: 1} for s in skills] + [{a: 1, b: 1} for i, a in enumerate(skills) for b in skills[i + 1:]] + [
        {s: 1 for s in skills}]
    return {'fixed:' + '+'.join(w): '; '.join(f'{s}:{n}' for s, n in allocate(w, budget).items()) for w in weights}


def oracle_rows(evals: list[dict], names: list[str]) -> list[dict]:
    "Per seed, the row of the fixed plan (of `names`) with the best test gain, as the teacher `oracle` (hindsight)."
    by_seed = {}
    for r in evals:
        if r['policy'] in names and (r['seed'] not in by_seed or r['test_gain_points'] > by_seed[r['seed']]['test_gain_points']):
            by_seed[r['seed']] = r
    return [{**r, 'policy': 'oracle', 'oracle_plan': r['policy']} for _, r in sorted(by_seed.items())]


def between(rows: list[dict], a: str, b: str) -> dict | None:
    "`a` minus `b` on the test gain (points), paired by seed, as {mean, lo, hi, n}."
    of = lambda name: [r for r in rows if r['policy'] == name]
    return difference_interval(paired_difference(of(a), of(b), 'test_gain_points'))


def diff(report: dict, b: str, metric: str = 'test_gain_points') -> dict | None:
    "grpo minus `b` on `metric` as {mean, lo, hi} (points), from a `teacher_report`."
    d = next((d for d in report['pairs'] if d and d['b'] == b and d['metric'] == metric), None)
    return difference_interval(d)


def check_held_out(held_out: list[int], used: set[int]) -> None:
    "Refuse, with a clear error, evaluation seeds the recipe trained or calibrated on."
    if bad := sorted(set(held_out) & (used | set(CALIBRATION_SEEDS))):
        raise SystemExit(f'evaluation seeds {bad} were used in training or calibration (training seeds and '
                         f'{CALIBRATION_SEEDS.start}-{CALIBRATION_SEEDS.stop - 1}); evaluate on other seeds, e.g. 0-9')


def per_step(log: list[dict], key) -> list[float]:
    "The mean of `key(row)` over each GRPO step's completions."
    steps = sorted({r['step'] for r in log})
    return [round(float(np.mean([key(r) for r in log if r['step'] == s])), 4) for s in steps]


def train_recipe(a, out: Path, env, train: list[int], fast_fit: dict) -> dict:
    "Warm-up, SFT, GRPO and the best fixed plan's search, saved under `out` (models/, logs/, run.json)."
    res, t = {'settings': vars(a), 'train_seeds': train}, time.perf_counter()

    demonstrators = [make(f'policy:skill-list/{n.strip()}') for n in a.warmup_policies.split(',')]
    rows = record_plans(env, demonstrators, train, a.warmup_iterations)
    chats = plan_chats(rows)
    chats.to_json(out / 'warmup.jsonl')
    res['warmup'] = {'chats': len(chats), 'seconds': round(time.perf_counter() - t, 1)}
    model, tok = tiny_agent(max_length=512)
    t = time.perf_counter()
    sft = sft_train(model, tok, chats, SFTSettings(max_steps=a.sft_steps, batch_size=8, max_length=512), log_dir=out / 'logs')
    losses = [h['loss'] for h in sft.state.log_history if 'loss' in h]
    res['sft'] = {'steps': sft.state.global_step, 'loss': [round(losses[0], 4), round(losses[-1], 4)],
                  'seconds': round(time.perf_counter() - t, 1)}
    sft_model = copy.deepcopy(sft.model)           # GRPO trains `sft.model` in place

    kw = dict(penalty=a.penalty, log_path=out / 'logs' / 'rollouts.jsonl', scale=not a.free, constrained=not a.free)
    if a.reference_step: rollouts = PlanRollouts(env, train, **kw)
    else: rollouts = FastPlanRollouts(env, train, fast_fit, a.grade, iterations=a.grpo_iterations, lead=demonstrators[0], **kw)
    t = time.perf_counter()
    grpo = grpo_train(sft.model, tok, rollouts, GRPOSettings(steps=a.grpo_steps, num_generations=a.num_generations,
                      per_step=a.per_step, lr=a.grpo_lr, beta=a.beta, temperature=a.temperature, seed=0), log_dir=out / 'logs')
    grpo_seconds, log = time.perf_counter() - t, rollouts.log
    taken = [r['seconds'] for r in log if r['error'] is None]     # a refused plan trains nothing: not an env step's cost
    res['grpo'] = {'steps': grpo.state.global_step, 'prompts': len(rollouts.dataset), 'completions': len(log),
                   'reward_per_step': per_step(log, lambda r: r['reward']),
                   'refused_per_step': per_step(log, lambda r: r['error'] is not None),
                   'trainer_reward_per_step': [round(h['reward'], 4) for h in grpo.state.log_history if 'reward' in h],
                   'seconds': round(grpo_seconds, 1)}
    reward_curve(log).savefig(out / 'reward_curve.png', dpi=100)
    res['plan_shares_per_step'] = _plan_shares(log).round(3).to_dict('index') if taken else {}
    res['timing'] = {'seconds_per_grpo_step': round(grpo_seconds / max(grpo.state.global_step, 1), 2),
                     'seconds_per_env_step': round(float(np.mean(taken)), 2) if taken else None, 'env_steps': len(taken),
                     'env_share_of_grpo': round(sum(r['seconds'] for r in log) / grpo_seconds, 3), 'threads': a.threads}

    save_agent(grpo.model, tok, out / 'models' / 'grpo'); save_agent(sft_model, tok, out / 'models' / 'sft')
    t = time.perf_counter()
    res['best_fixed'], res['fixed_plan_rewards'] = best_fixed_plan(env, train, a.num_generations, fast_fit, a.grade)
    res['best_fixed_seconds'] = round(time.perf_counter() - t, 1)
    (out / 'run.json').write_text(json.dumps(res, indent=1))
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--setup', default='math/missing-skill',
                   help="teaching.train's setup (small, tiny) or a registered preset (math/missing-skill, math/profiles, math/undertrained-seed)")
    p.add_argument('--eval-iterations', type=int, default=0, help="iterations of an evaluation episode (0: the setup's)")
    p.add_argument('--train-seeds', default='1000-1015', help='warm-up and GRPO seeds, e.g. 1000-1019')
    p.add_argument('--eval-seeds', default='0-9', help='held-out seeds, e.g. 0-9 (never trained on)')
    p.add_argument('--warmup-iterations', type=int, default=2,
                   help="iterations of the warm-up's observations (after the first, reached by the first warm-up policy)")
    p.add_argument('--grpo-iterations', type=int, default=2,
                   help="iterations GRPO's prompts come from (after the first, reached by the first warm-up policy's plans)")
    p.add_argument('--no-oracle', action='store_true',
                   help="skip the per-seed oracle (each skill alone, each pair, all evenly: whole episodes on every held-out seed)")
    p.add_argument('--warmup-policies', default='with-state,no-state', help='the registered SKILL-LIST policies SFT imitates, comma-separated')
    p.add_argument('--sft-steps', type=int, default=400)
    p.add_argument('--grpo-steps', type=int, default=160)
    p.add_argument('--per-step', type=int, default=1, help='training seeds (prompts) per GRPO step')
    p.add_argument('--num-generations', type=int, default=8, help='plans per prompt (the GRPO group)')
    p.add_argument('--grpo-lr', type=float, default=1e-3)
    p.add_argument('--beta', type=float, default=0.0, help='KL weight to the SFT start (0: no reference model)')
    p.add_argument('--temperature', type=float, default=1.0)
    p.add_argument('--penalty', type=float, default=-0.1, help='reward of a plan the environment refuses')
    p.add_argument('--eval-sampled', action='store_true',
                   help='also evaluate both models sampling at --temperature (seeded by the episode), the policy GRPO trains')
    p.add_argument('--free', action='store_true', help="decode freely (no plan grammar) and refuse plans over the budget")
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--out', default='runs/teacher-grpo')
    p.add_argument('--reference-step', action='store_true',
                   help='GRPO on TeachingEnv.step, one plan at a time (default: the fast step, teaching.fast.GroupStep)')
    p.add_argument('--fast-fit', default='{}', help="the fast step's fit settings over its defaults (JSON)")
    p.add_argument('--grade', default='answer_prob', choices=_GRADES,
                   help="what the fast step grades a student by: the probability of the exact answer, or exact match")
    p.add_argument('--json', action='store_true', help='print only the summary (grpo_minus_* and n_seeds) and the settings')
    a = p.parse_args()
    fast_fit = json.loads(a.fast_fit)
    matplotlib.use('Agg')
    torch.set_num_threads(a.threads)
    datasets.disable_progress_bars()
    train, held_out = parse_seeds(a.train_seeds), parse_seeds(a.eval_seeds)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    if (out / 'run.json').exists():          # a finished run: its seeds and setup, whatever the flags say
        saved = json.loads((out / 'run.json').read_text())
        train, a.setup = saved['train_seeds'], saved['settings']['setup']
    check_held_out(held_out, set(train))
    cache = out / 'seed-students'
    env = teacher_env(a.setup, seed_cache=cache)
    res = json.loads((out / 'run.json').read_text()) if (out / 'run.json').exists() else train_recipe(a, out, env, train, fast_fit)
    res['eval_seeds'] = held_out
    res['settings'] = {**res['settings'], 'eval_seeds': a.eval_seeds}     # a reused run was evaluated on others
    tok = AutoTokenizer.from_pretrained(out / 'models' / 'grpo')
    grpo_model, sft_model = (AutoModelForCausalLM.from_pretrained(out / 'models' / n).eval() for n in ('grpo', 'sft'))
    lm = dict(fallback=SkillListRandom(), scale=not a.free, constrained=not a.free)
    sampled = {f'{n}@{a.temperature:g}': LMTeacher(m, tok, f'{n}@{a.temperature:g}', temperature=a.temperature, **lm)
               for n, m in (('grpo', grpo_model), ('sft', sft_model))} if a.eval_sampled else {}
    teachers = {'grpo': LMTeacher(grpo_model, tok, 'grpo', **lm), 'sft': LMTeacher(sft_model, tok, 'sft', **lm), **sampled,
                'with-state': SkillListTeacher(), 'no-state': SkillListRandom(), 'best-fixed': FixedReply(res['best_fixed'])}
    family = {} if a.no_oracle else plan_family(sorted(env.domain.skills), env.config.budget)
    teachers |= {name: FixedReply(plan, name) for name, plan in family.items()}
    t = time.perf_counter()
    eval_overrides = {'iterations': a.eval_iterations} if a.eval_iterations else {}
    evals = evaluate_teachers(lambda: teacher_env(a.setup, seed_cache=cache, **eval_overrides), teachers, held_out, out / 'eval',
                              a.setup.replace('/', '-'))
    evals += oracle_rows(evals, list(family))
    (out / 'eval.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in evals))
    res['eval_seconds'] = round(time.perf_counter() - t, 1)
    models = [n for n, t in teachers.items() if isinstance(t, LMTeacher)]
    res['invalid_replies'] = {n: sum(not r['valid'] for r in teachers[n].replies) for n in models}
    res['scaled_replies'] = {n: sum(r['scaled'] for r in teachers[n].replies) for n in models}
    res['replies'] = {n: len(teachers[n].replies) for n in models}
    res['plans'] = {n: [r['reply'] for r in teachers[n].replies] for n in models}
    res['report'] = teacher_report([r for r in evals if r['policy'] not in sampled and r['policy'] not in family], 'grpo')
    res['oracle_plans'] = {r['seed']: r['oracle_plan'] for r in evals if r['policy'] == 'oracle'}
    tables = [report_table(res['report'])]
    if sampled:
        res['report_sampled'] = teacher_report([r for r in evals if r['policy'] not in ('grpo', 'sft')], next(iter(sampled)))
        tables.append(report_table(res['report_sampled']))
    (out / 'report.md').write_text('\n\n'.join(tables) + '\n')
    (out / 'result.json').write_text(json.dumps(res, indent=1))
    summary = {'grpo_minus_sft': diff(res['report'], 'sft'), 'grpo_minus_with_state': diff(res['report'], 'with-state'),
               'grpo_minus_no_state': diff(res['report'], 'no-state'), 'grpo_minus_best_fixed': diff(res['report'], 'best-fixed'),
               'oracle_minus_best_fixed': between(evals, 'oracle', 'best-fixed'),
               'grpo_minus_oracle': diff(res['report'], 'oracle'),
               'n_seeds': len(held_out), 'setup': a.setup, 'best_fixed': res['best_fixed'], 'out': str(out)}
    (out / 'summary.json').write_text(json.dumps(summary, indent=1))
    print(json.dumps({**summary, 'settings': res['settings']} if a.json else {**summary, **res}))


if __name__ == '__main__':
    main()

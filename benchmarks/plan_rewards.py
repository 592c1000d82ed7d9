"""How much one SKILL-LIST step's reward tells plans apart: the signal a GRPO teacher learns from (issue 26).

For each seed, every plan below is played for one step from that seed's student (cached) and paid the environment's
reward, the validation gain in points, as `PlanRollouts` pays a GRPO completion: each plan goes through its reply
text (`skill:n; skill:n`), so the heuristic's plan loses the failures it would have had the engine imitate. The
plans: the with-state heuristic, the no-state control, the budget split evenly, and the whole budget on each skill
alone. A setup in which every plan earns about the same, within the seed-to-seed noise, gives GRPO nothing to learn
whatever its settings.

    python benchmarks/plan_rewards.py --setup small --seeds 1000-1003       # teaching.train's teacher_env('small')
    python benchmarks/plan_rewards.py --setup math/undertrained-seed --seeds 1000-1002

Prints one JSON object: per plan the rewards per seed, their mean and bootstrap 95% CI, and `spread` (best mean minus
worst mean) beside `noise` (the mean over plans of the standard deviation across seeds; none for one seed).

Measured on this project's 2-core machine, two torch threads, nothing else running (2026-12-02), the two commands above
(mean validation gain in points over the seeds):
- `small` (3.5 s a step): even split +5.3, no-state +4.5, with-state +3.5, modular arithmetic alone +2.5, each other
  skill alone -0.8 to -0.5; spread 6.0 against a noise of 3.0. The plans the SFT start writes (with-state and no-state
  mixtures) earn the same within the noise: there is little for GRPO to tell apart (it changed no greedy plan there).
- `math/undertrained-seed` (13.6 s a step): addition alone +8.0, subtraction alone +6.7, with-state +5.5, even split +2.2,
  no-state +1.0, multiplication alone -7.8, fractions alone -9.3; spread 17.3 against a noise of 4.2.
"""
import argparse, json, time

import numpy as np
import torch

from dataenvgym.stats import bootstrap_ci, parse_seeds
from dataenvgym.teaching.envs import SkillListAction, SkillPlan, _spread_evenly
from dataenvgym.teaching.policies import SkillListRandom, SkillListTeacher
from dataenvgym.teaching.train import plan_action, plan_text, teacher_env


def plans_for(obs) -> dict[str, SkillListAction]:
    "The plans compared at `obs`: with-state, no-state, an even split, and each skill alone (`teacher_speed.py` starts from them)."
    skills = sorted(obs.per_skill)
    even = SkillListAction(plans=[SkillPlan(skill=s, n=n) for s, n in zip(skills, _spread_evenly(obs.budget, len(skills)))])
    alone = {f'only {s}': SkillListAction(plans=[SkillPlan(skill=s, n=obs.budget)]) for s in skills}
    return {'with-state': SkillListTeacher()(obs), 'no-state': SkillListRandom()(obs), 'even': even, **alone}


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--setup', default='small', help="teaching.train's setup (small, tiny) or a registered preset "
                   "(math/undertrained-seed)")
    p.add_argument('--seeds', default='1000-1003')
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--seed-cache', default='runs/plan-rewards/seed-students')
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    env, seeds = teacher_env(a.setup, seed_cache=a.seed_cache), parse_seeds(a.seeds)
    rewards, plans, secs = {}, {}, []
    for seed in seeds:
        for name, action in plans_for(env.reset(seed=seed)).items():
            text = plan_text(action)
            env.reset(seed=seed)
            t = time.perf_counter()
            obs = env.step(plan_action(text))
            secs.append(time.perf_counter() - t)
            rewards.setdefault(name, []).append(round(100 * float(obs.reward), 2))
            plans.setdefault(name, []).append(text)
    means = {k: float(np.mean(v)) for k, v in rewards.items()}
    print(json.dumps({'setup': a.setup, 'seeds': seeds, 'seconds_per_step': round(float(np.mean(secs)), 2),
                      'plans': {k: {'rewards': v, 'mean': round(means[k], 2), 'ci': bootstrap_ci(v), 'texts': plans[k]}
                                for k, v in rewards.items()},
                      'spread': round(max(means.values()) - min(means.values()), 2),
                      'noise': round(float(np.mean([np.std(v, ddof=1) for v in rewards.values()])), 2) if len(seeds) > 1 else None}))


if __name__ == '__main__':
    main()

"""How much of the room left by the no-state control a teacher with state takes: the best fixed allocation, with hindsight.

A fixed plan splits every iteration's budget over the skills in the same proportions, whatever the student does
(`FixedPlan`; in SKILL-TREE `FixedTreePlan` splits it over subskills and explores those it names in the taxonomy's
order). This benchmark runs, in `--env` (SKILL-LIST by default; VQA's preset is compared in SKILL-TREE) on the given
seeds, the registered `with-state` and `no-state` teachers and a family of fixed plans (each skill alone, each pair
evenly, all evenly, over skills or, in SKILL-TREE, subskills; or the ones given with `--plans`), all from the same
cached seed student of each seed. The best fixed plan is the one with the highest mean test gain over those seeds:
an upper bound found with hindsight, so run it on calibration seeds (>= 1000).
The room is best-fixed − no-state; `share_of_room` is (with-state − no-state) / room. The per-seed `oracle` is the
best fixed plan of each seed, chosen with hindsight on that seed's test gain: what a teacher that reads its student
could reach with this family of plans. `oracle_minus_best_fixed` and `oracle_minus_with_state` (paired by seed,
bootstrap 95% CIs) say whether the best plan depends on the student, and whether the with-state heuristic leaves room. `seed-data-only` is the
gain with no teacher data at all: the same seed student trained each iteration's steps on its seed data alone, the
iteration best on validation kept, as for the teachers; what a teacher gains beyond it is what its data bought.

    python benchmarks/allocation_bound.py --domain vqa --env skill-tree --seeds 1000-1002 \
        --plans '{"size": 1, "material": 1, "count_all": 1}' '{"color": 1, "size": 1, "count_all": 1}'
    python benchmarks/allocation_bound.py --domain code --seeds 1000 1001 --plans '{"lists": 1, "loops": 1}'
    python benchmarks/allocation_bound.py --domain math --preset profiles --seeds 1000-1011 \
        --plans '{"addition": 1}' '{"subtraction": 1}' '{"modular_arithmetic": 1}' ...   # seed students that differ

Prints one JSON object: per policy and plan the mean test gain (points) with its bootstrap 95% CI and the per-seed
gains, the best fixed plan, and the table row best-fixed / with-state / no-state / seed-data-only. Runs are kept
under `--out` (default `runs/allocation-bound`), so an interrupted run resumes where it stopped.
"""
import argparse, json, time
from itertools import combinations
from pathlib import Path

from dataenvgym.core import evaluate, read_jsonl
from dataenvgym.registry import make
from dataenvgym.stats import bootstrap_ci, difference_interval, paired_difference, parse_seeds
from dataenvgym.teaching.policies import FixedPlan, FixedTreePlan
from dataenvgym.teaching.presets import preset_name
from dataenvgym.teaching.runner import EpisodeResult, run_episode
from dataenvgym.teaching.sweep import _torch_threads


def default_plans(skills: list[str]) -> list[dict[str, float]]:
    "Each skill alone, each pair evenly, all evenly."
    return [{s: 1.0} for s in skills] + [{a: 1.0, b: 1.0} for a, b in combinations(skills, 2)] + [
        {s: 1.0 for s in skills}]


def plan_label(plan: dict[str, float]) -> str:
    "The plan's name (and run folder): its skills, each with its weight (`x3`) unless all weigh the same."
    used = {s: w for s, w in sorted(plan.items()) if w > 0}
    even = len(set(used.values())) == 1
    return 'fixed:' + '+'.join(s if even else f'{s}x{w:g}' for s, w in used.items())


def run_folder(out: Path, preset: str, env_name: str, label: str, seed: int) -> Path:
    "Where a policy's (or the control's) episode on `seed` is kept."
    return out / preset.replace('/', '-') / env_name / label / f'seed{seed}'


def finished_gain(folder: Path) -> float | None:
    "The test gain (points) of the episode kept in `folder`, None if it has not finished."
    if not (folder / 'result.jsonl').exists(): return None
    return round(100 * read_jsonl(folder / 'result.jsonl', EpisodeResult)[0].test_gain, 2)


def episode(preset: str, policy, label: str, seed: int, out: Path, env_name: str = 'skill-list') -> float:
    "The test gain (points) of `policy` in `env_name` on `seed`, run now or read back."
    folder = run_folder(out, preset, env_name, label, seed)
    if (gain := finished_gain(folder)) is not None: return gain
    env = make(env_name, preset=preset, seed_cache=out / 'seed-students')
    if isinstance(policy, str): policy = make(f'policy:{env_name}/{policy}', domain=env.domain, llm=None)
    with _torch_threads(1): res = run_episode(env, policy, folder, seed, progress=False)
    return round(100 * res.test_gain, 2)


def seed_data_only(preset: str, seed: int, out: Path, env_name: str = 'skill-list') -> float:
    "The test gain (points) with no teacher data: each iteration's `fit` on the seed data alone, best on validation."
    folder = run_folder(out, preset, env_name, 'seed-data-only', seed)
    if (folder / 'result.json').exists(): return json.loads((folder / 'result.json').read_text())['test_gain']
    env = make(env_name, preset=preset, seed_cache=out / 'seed-students')
    with _torch_threads(1):
        env.reset(seed=seed)                                   # evaluates the seed student on validation
        val, test = [env.state.history[-1]], [evaluate(env.student, env.test, env.domain).overall]
        for _ in range(env.config.iterations if env.seed_data else 0):     # no seed data: nothing to train on
            env.student.fit(env.seed_data, from_base=env.config.from_base, progress=False, **env.config.fit)
            val.append(evaluate(env.student, env.val, env.domain).overall)
            test.append(evaluate(env.student, env.test, env.domain).overall)
    best = max(range(len(val)), key=lambda i: (val[i], -i))     # as `runner.finish` picks it
    gain = round(100 * (test[best] - test[0]), 2)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / 'result.json').write_text(json.dumps({'val': val, 'test': test, 'best_iteration': best,
                                                    'test_gain': gain}))
    return gain


def summary(gains: list[float]) -> dict:
    return {'mean_gain': round(sum(gains) / len(gains), 2), 'ci': bootstrap_ci(gains), 'gains': gains}


def oracle(runs: dict[str, list[float]]) -> tuple[list[float], list[str]]:
    "Per seed, the best fixed plan's gain and its name (hindsight on that seed)."
    fixed = [k for k in runs if k.startswith('fixed:')]
    best = [max(fixed, key=lambda k: runs[k][i]) for i in range(len(runs[fixed[0]]))]
    return [runs[k][i] for i, k in enumerate(best)], best


def difference(a: list[float], b: list[float], seeds: list[int]) -> dict:
    "a − b paired by seed: mean, bootstrap 95% CI, n."
    rows = lambda gains: [{'seed': s, 'g': g} for s, g in zip(seeds, gains)]
    return difference_interval(paired_difference(rows(a), rows(b), 'g'))


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--domain', default='code')
    p.add_argument('--preset', default='embedded')
    p.add_argument('--env', default='skill-list', choices=['skill-list', 'skill-tree'],
                   help='where the teachers are compared; SKILL-TREE plans split the budget over subskills')
    p.add_argument('--seeds', nargs='+', default=['1000-1001'], help='calibration seeds (>= 1000)')
    p.add_argument('--plans', nargs='*', default=None, help='fixed plans as JSON {skill: weight} '
                   '(SKILL-TREE: {subskill: weight}); default: each one, each pair, all evenly')
    p.add_argument('--out', default='runs/allocation-bound')
    a = p.parse_args()
    preset, seeds, out, t0 = preset_name(a.preset, a.domain), parse_seeds(a.seeds), Path(a.out), time.perf_counter()
    taxonomy = make(a.env, preset=preset).domain.skills
    tree = a.env == 'skill-tree'
    names = sorted(sub for subs in taxonomy.values() for sub in subs) if tree else sorted(taxonomy)
    plans = [json.loads(s) for s in a.plans] if a.plans else default_plans(names)
    if bad := sorted({s for w in plans for s in w} - set(names)):
        p.error(f'unknown {"subskills" if tree else "skills"} {bad} in --plans; those of {preset} are {names}')
    fixed = (lambda w: FixedTreePlan(w, taxonomy)) if tree else FixedPlan
    runs = {pol: [episode(preset, pol, pol, s, out, a.env) for s in seeds] for pol in ('with-state', 'no-state')}
    runs |= {plan_label(w): [episode(preset, fixed(w), plan_label(w), s, out, a.env) for s in seeds] for w in plans}
    runs['seed-data-only'] = [seed_data_only(preset, s, out, a.env) for s in seeds]
    cells = {k: summary(v) for k, v in runs.items()}
    best = max((k for k in cells if k.startswith('fixed:')), key=lambda k: cells[k]['mean_gain'])
    oracle_gains, oracle_plans = oracle(runs)
    cells['oracle'] = {**summary(oracle_gains), 'plans': oracle_plans}
    room = cells[best]['mean_gain'] - cells['no-state']['mean_gain']
    took = cells['with-state']['mean_gain'] - cells['no-state']['mean_gain']
    print(json.dumps({'preset': preset, 'env': a.env, 'seeds': seeds, 'cells': cells, 'best_fixed': best,
                      'table': {'best_fixed': cells[best]['mean_gain'], 'with_state': cells['with-state']['mean_gain'],
                                'no_state': cells['no-state']['mean_gain'],
                                'seed_data_only': cells['seed-data-only']['mean_gain'],
                                'oracle': cells['oracle']['mean_gain']},
                      'oracle_minus_best_fixed': difference(oracle_gains, runs[best], seeds),
                      'oracle_minus_with_state': difference(oracle_gains, runs['with-state'], seeds),
                      'room': round(room, 2), 'share_of_room': round(took / room, 2) if room > 0 else None,
                      'minutes': round((time.perf_counter() - t0) / 60, 1)}))

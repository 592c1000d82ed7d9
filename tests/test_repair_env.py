"""Determinism and the benchmark's key property on a few seeds (the full measurement is benchmarks/repair.py)."""
from dataenvgym.repair.agents import HeuristicAgent, OracleAgent, RandomAgent, SubmitAgent, play_episode
from dataenvgym.repair.env import RepairEnv


def test_same_seed_same_episode():
    a = [play_episode(RepairEnv('task_2_medium'), RandomAgent(1), 4) for _ in range(2)]
    assert a[0].commands == a[1].commands and a[0].ret == a[1].ret and a[0].accuracy == a[1].accuracy
    o = [RepairEnv('task_3_hard').reset(seed=2) for _ in range(2)]
    assert o[0] == o[1]


def test_trivial_agents_fail_oracle_wins():
    env = RepairEnv()
    for task in ['task_0_tutorial', 'task_3_hard']:
        for seed in range(3):
            assert not play_episode(env, SubmitAgent(), seed, task).success
            assert play_episode(env, OracleAgent(), seed, task).success


def test_corruption_record_and_split():
    env = RepairEnv('task_3_hard'); env.reset(seed=0)
    assert set(env.ep.record) == set(env.ep.task.corruptions)
    assert len(env.ep.clean.merge(env.ep.test, how='inner')) == 0
    assert env.baseline < env.target <= env.reference


def test_memos_do_not_change_results():
    from dataenvgym.repair.env import clear_caches
    env = RepairEnv('task_2_medium')
    first = [play_episode(env, agent, 7) for agent in (HeuristicAgent(), OracleAgent())]
    clear_caches()
    again = [play_episode(RepairEnv('task_2_medium'), agent, 7) for agent in (HeuristicAgent(), OracleAgent())]
    for a, b in zip(first, again):
        assert (a.commands, a.ret, a.accuracy, a.target) == (b.commands, b.ret, b.accuracy, b.target)


def test_benchmark_reports_cold_and_warm_speeds():
    import importlib.util, pathlib
    spec = importlib.util.spec_from_file_location('repair_bench', pathlib.Path(__file__).parents[1] / 'benchmarks' / 'repair.py')
    bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench)
    out = bench.main(['--agents', 'heuristic,submit', '--seeds', '2', '--tasks', 'task_0_tutorial'])['task_0_tutorial']
    assert {'clean_accuracy', 'corrupted_accuracy', 'fit_ms_median'} <= set(out)
    keys = {'success_rate', 'mean_return', 'heldout_accuracy', 'episodes_per_s', 'steps_per_s', 'validate_ms_median'}
    assert keys | {f'{k}_warm' for k in ('episodes_per_s', 'steps_per_s', 'validate_ms_median')} <= set(out['heuristic'])
    assert out['submit']['success_rate'] == 0.0

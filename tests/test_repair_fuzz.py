"""Fuzz the data-repair environment with random command strings (hypothesis): no exception escapes, the ground truth
never changes, the step budget is always respected, and nothing is rewarded after the episode ends."""
from hypothesis import HealthCheck, given, settings, strategies as st

from dataenvgym.repair.env import COMMANDS, RepairEnv

WORDS = list(COMMANDS) + ['APPLY', ' Submit ', 'query_augmenter 7', 'apply -1', 'apply 99999999999', 'undo undo', '']
command = st.one_of(
    st.text(max_size=300),
    st.builds(lambda w, n: f'{w} {n}', st.sampled_from(WORDS), st.integers(-3, 12)),
    st.sampled_from(WORDS),
    st.builds(lambda w, pad: pad + w.upper() + pad, st.sampled_from(WORDS), st.sampled_from(['', ' ', '\t', '\n  '])))

ENV = RepairEnv('task_0_tutorial')
SEEN = {'commands': 0}
EPISODES, PER_EPISODE = 250, 20  # 5,000 command strings


@settings(max_examples=EPISODES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 3), commands=st.lists(command, min_size=PER_EPISODE, max_size=PER_EPISODE))
def check_random_commands(seed, commands):
    "One fuzzed episode; counted in SEEN."
    env = ENV
    env.reset(seed=seed)
    budget, truth = env.ep.task.budget, env.truth_hash
    for msg in commands:
        was_done = env.state.done
        obs = env.step(msg)
        SEEN['commands'] += 1
        assert env._truth_hash() == truth
        assert 0 <= obs.budget_remaining <= budget
        assert env.state.step_count <= budget + 1  # at most one (rejected) step after the end
        if was_done: assert obs.reward is None and obs.done
        else: assert obs.reward is not None and -1.0 <= obs.reward <= 1.0
        if obs.budget_remaining == 0: assert obs.done


def test_random_commands_are_safe():
    "All the fuzzed episodes, in one test, so the count holds wherever pytest-xdist runs it."
    SEEN['commands'] = 0
    check_random_commands()
    assert SEEN['commands'] >= 5000, SEEN

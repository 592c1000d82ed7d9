"""Which fixes does a repair tier need? Agents with some kinds of fix left out, played beside the full ones.

    python experiments/repair-expert-decision/ablations.py                  # expert seeds 0-39: the README's numbers
    python experiments/repair-expert-decision/ablations.py --seeds 0:10 --json

A tier is as hard as the fixes it makes necessary, not as the corruptions it injects. `WithoutFixes` wraps an agent
and leaves some kinds of fix out: when the agent applies one, it gets back, without a step, the error observation the
environment gives a refused `apply` (nothing changed), and plays on. `ablations` builds the agent and its variants
with one kind left out each, for `dataenvgym.repair.agents.compare_agents`; a kind whose absence costs no success is
one the task does not need.

Prints, per agent, the success rate and the mean held-out accuracy over `--seeds` (`START:COUNT`) of `--task`; the
inspector and the oracle without each of the expert tier's corruptions' fixes (the oracle also without `relabel`).
"""
import argparse, json, sys
from typing import Callable, Iterable, Sequence

import numpy as np

from dataenvgym.repair.agents import Agent, InspectorAgent, OracleAgent, compare_agents
from dataenvgym.repair.env import ALL_COMMANDS, RepairObservation, parse_command
from dataenvgym.repair.specialists import _OPS

EXPERT_FIXES = ['rescale', 'coerce_numeric', 'drop_duplicates', 'impute', 'relabel_site']


def _applied(command: str, obs: RepairObservation) -> dict | None:
    "The listed recommendation that `command` applies (as the environment reads it), or `None`."
    try: cmd, n = parse_command(command, ALL_COMMANDS)
    except ValueError: return None
    if cmd != 'apply': return None
    return next((r for r in obs.metadata.get('recommendations', []) if r['n'] == n), None)


class WithoutFixes:
    "`agent` with the fix kinds `ops` left out: its `apply` of one is answered, without a step, by an error observation."
    def __init__(self, agent: Agent, ops: Iterable[str], patience: int = 100):
        ops = frozenset(ops)
        if bad := sorted(ops - set(_OPS)): raise ValueError(f'unknown fix kinds {bad}; valid: {", ".join(_OPS)}')
        self.agent, self.ops, self.patience = agent, ops, patience

    def begin(self, env):
        self.left_out = []                       # the commands answered by an error, in order
        self.agent.begin(env)

    def act(self, obs: RepairObservation) -> str:
        for _ in range(self.patience):
            command = self.agent.act(obs)
            if (rec := _applied(command, obs)) is None or rec['op'] not in self.ops: return command
            self.left_out.append(command)
            error = f"{rec['op']} is left out"
            obs = obs.model_copy(update={'response': f'Error: {error}', 'reward': None,
                                         'metadata': {**obs.metadata, 'error': error}})
        raise RuntimeError(f'the agent applied a left-out fix {self.patience} times in a row '
                           f'({", ".join(sorted(self.ops))}); it does not take an error for an answer')


def ablations(name: str, make: Callable[[int], Agent], ops: Sequence[str]) -> dict[str, Callable[[int], Agent]]:
    "For `compare_agents`: `make(seed)` as `name`, and it without each kind in `ops` as `name without op`."
    return {name: make, **{f'{name} without {op}': (lambda seed, op=op: WithoutFixes(make(seed), [op]))
                           for op in ops}}


def needed(task: str, seeds: Sequence[int], ops: Sequence[str] = EXPERT_FIXES) -> dict[str, dict[str, float]]:
    "Per agent (the inspector and the oracle, each also without each of `ops`): success rate and mean accuracy."
    rows = compare_agents({**ablations('inspector', lambda s: InspectorAgent(), ops),
                           **ablations('oracle', lambda s: OracleAgent(), [*ops, 'relabel'])}, [task], list(seeds))
    agents = dict.fromkeys(r['agent'] for r in rows)
    mean = lambda a, k: round(float(np.nanmean([r[k] for r in rows if r['agent'] == a])), 3)
    return {a: {'success': mean(a, 'success'), 'accuracy': mean(a, 'accuracy')} for a in agents}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--task', default='task_4_expert')
    p.add_argument('--seeds', default='0:40', help='START:COUNT')
    p.add_argument('--json', action='store_true', help='print the JSON object only')
    a = p.parse_args(argv)
    start, _, count = a.seeds.partition(':')
    try: seeds = range(int(start), int(start) + int(count))
    except ValueError: p.error(f'--seeds takes START:COUNT, not {a.seeds!r}')
    out = needed(a.task, seeds)
    if a.json: print(json.dumps({'task': a.task, 'seeds': [seeds.start, len(seeds)], 'agents': out})); return
    for agent, r in out.items(): print(f"{agent:40} success {r['success']:.3f}  accuracy {r['accuracy']:.3f}")


if __name__ == '__main__': sys.exit(main())

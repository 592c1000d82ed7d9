"""GRPO credited on one decision of the repair agent: two TRL `rollout_func`s, research probes behind `grpo_decisions.py`.

`EnvRollouts` (`dataenvgym.repair.rollouts`) plays whole episodes, so a GRPO step costs many generations and the one
choice that decided an episode's success is a few tokens among hundreds. These ask GRPO smaller questions.

`DecisionRollouts`: the prompts are the observations a demonstrator answered right after a command in `after` (the
site report, by default), each alone, as in `decision_dataset`; the policy answers once, and `reward` scores it:

- `'episode'`: the demonstrator plays on from that reply (`finish`), and the reward is that episode's return plus
  `success_bonus` when it reaches the target: what the choice is worth if everything else is done well;
- `'demonstrator'`: 1 when the reply is the demonstrator's own command, else 0 (supervision, given as a reward);
- a command, such as `'apply 1'`: 1 when the reply is that command. This is a control: any learner should move
  towards a fixed answer, so a run that cannot do that has a bug, not a hard task;
- a function of the observation's text and the reply: any other rule, such as a contextual control.

`states` picks the episodes the prompts come from: `'successful'` (the demonstrator's successful ones, as the
warm-up's decision chats) or `'all'`, its failures too: with the `'episode'` reward they hold the only decisions
where a reply other than the demonstrator's can turn its failure into a success. `evaluate` gives the model's greedy
reply at every decision, scored the same way.

`BranchRollouts` credits one decision *where the agent makes it*: for each seed of a step the policy plays the
episode greedily; one of its decisions right after a command in `after` is drawn (from the seed and the step; the
first `skip` of them left out); each of the group's episodes replays the agent's own commands up to that decision
(`play_branched`), samples a reply there at the trainer's temperature, and plays on greedily. A group's episodes then
differ by that one reply, so its outcome is that reply's credit, and only that reply is trained on. `reward` is
`'success'` (1 for a success) or `'episode'` (the return plus `success_bonus` for a success).

What they measured: `README.md` beside this file. The tests: `tests/test_grpo_decisions.py`.
"""
import time
from collections import Counter
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from dataenvgym.lm import agent_messages, _append_jsonl, encode, render, sample_replies
from dataenvgym.repair.agents import BASELINES, Agent, _PathAgent, _exhaustive_path
from dataenvgym.repair.demos import SYSTEM_PROMPT, decision_dataset, record_rollouts
from dataenvgym.repair.env import RepairEnv
from dataenvgym.repair.rollouts import (Rollout, _advance, _begin, _live, _command_replies, command_trie,
                                       play_episodes)


def as_read(command: str) -> str: return ' '.join(command.lower().split())   # as the environment reads it


def reply_text(tokenizer, ids: list[int]) -> str:
    "A generated reply's text, its end-of-turn token dropped."
    return tokenizer.decode([i for i in ids if i != tokenizer.eos_token_id], skip_special_tokens=True)


def demonstrator_agent(agent: str, task: str, seed: int) -> Agent:
    "The baseline `agent` for one episode; the exhaustive agent's search condensed to its path (`PathAgent`)."
    return _PathAgent(_exhaustive_path(task, seed)) if agent == 'exhaustive' else BASELINES[agent](seed)


class DecisionRollouts:
    "A TRL `rollout_func` over single decisions: a reply to a demonstrator's observation, scored by `reward`."
    def __init__(self, task: str = 'task_4_expert', seeds=range(100), demonstrator: str = 'inspector',
                 after: Sequence[str] = ('inspect_groups',),
                 reward: str | Callable[[str, str], float] = 'episode',
                 success_bonus: float = 1.0, states: str = 'successful',
                 system: str = SYSTEM_PROMPT, max_new_tokens: int = 20, max_length: int = 768,
                 log_path: str | Path | None = None):
        from datasets import Dataset
        if not callable(reward) and reward not in ('episode', 'demonstrator', *_command_replies(task)):
            raise ValueError(f"reward is 'episode', 'demonstrator', one command of {task} (such as 'apply 1') "
                             f"or a function of (observation, reply); got {reward!r}")
        if states not in ('successful', 'all'):
            raise ValueError(f"states is 'successful' (the demonstrator's successful episodes) or 'all'; "
                             f"got {states!r}")
        self.task, self.demonstrator, self.reward = task, demonstrator, reward
        self.success_bonus = success_bonus
        self.system, self.max_new_tokens, self.max_length = system, max_new_tokens, max_length
        self.log_path, self.log, self.trie, self._finished = log_path and Path(log_path), [], None, {}
        self.states, rows = {}, []
        episodes = record_rollouts([demonstrator], seeds, task)
        for d in decision_dataset(episodes, after, successful_only=states == 'successful', system=system):
            observation = d['messages'][-2]['content']
            if observation in self.states: continue        # the same observation on two seeds: the first kept
            self.states[observation] = (d['seed'], d['turn'], d['messages'][-1]['content'])
            rows.append({'prompt': d['messages'][:-1], 'seed': d['seed']})
        self.dataset = Dataset.from_list(rows)

    def state_of(self, prompt: list[dict]) -> tuple[int, int, str]:
        "`(seed, turn, the demonstrator's command)` of a prompt."
        return self.states[prompt[-1]['content']]

    def finish(self, seed: int, turn: int, command: str) -> tuple[float, bool]:
        "`(return, success)` on `seed`: `command` in place of the demonstrator's at `turn`, then the demonstrator."
        key = (seed, turn, as_read(command))
        if key not in self._finished:
            env, agent = RepairEnv(self.task), demonstrator_agent(self.demonstrator, self.task, seed)
            obs, ret, sent = env.reset(seed=seed), 0.0, 0
            agent.begin(env)
            while not obs.done:                  # the budget ends every episode
                own = agent.act(obs)
                obs = env.step(command if sent == turn else own)
                ret, sent = ret + (obs.reward or 0.0), sent + 1
            self._finished[key] = (ret, bool(env.state.success))
        return self._finished[key]

    def score(self, prompt: list[dict], command: str) -> dict:
        "The reply `command` to `prompt`: its state, whether it is the demonstrator's, and its reward."
        seed, turn, answer = self.state_of(prompt)
        row = {'seed': seed, 'turn': turn, 'reply': command, 'answer': answer,
               'match': as_read(command) == as_read(answer)}
        if callable(self.reward): return {**row, 'reward': float(self.reward(prompt[-1]['content'], command))}
        if self.reward == 'episode':
            ret, success = self.finish(seed, turn, command)
            return {**row, 'reward': ret + self.success_bonus * success, 'success': success}
        wanted = answer if self.reward == 'demonstrator' else self.reward
        return {**row, 'reward': float(as_read(command) == as_read(wanted))}

    def __call__(self, prompts: list, trainer) -> dict:
        "A sampled reply (commands only) to each prompt, scored: the ids, masks, rewards and seeds TRL expects."
        model, tok = trainer.accelerator.unwrap_model(trainer.model), trainer.processing_class
        self.trie = self.trie or command_trie(tok, self.task)
        contexts = [encode(tok, render(tok, p, True)) for p in prompts]
        replies = sample_replies(model, tok, contexts, self.trie, self.max_new_tokens,
                                 temperature=trainer.temperature)
        completions, masks, rows = [], [], []
        for prompt, ids in zip(prompts, replies):
            command = reply_text(tok, ids)
            mask = self.trie.mask(ids)
            if not ids or ids[-1] != tok.eos_token_id: ids, mask = ids + [tok.eos_token_id], mask + [0]
            t0 = time.perf_counter()
            row = self.score(prompt, command)
            seconds = round(time.perf_counter() - t0, 4)
            rows.append({'step': trainer.state.global_step, **row, 'env_seconds': seconds})
            completions.append(ids); masks.append(mask)
        self.log += rows
        if self.log_path: _append_jsonl(self.log_path, rows)
        return {'prompt_ids': contexts, 'completion_ids': completions, 'logprobs': None, 'env_mask': masks,
                'env_return': [r['reward'] for r in rows], 'env_seed': [r['seed'] for r in rows]}

    def evaluate(self, model, tokenizer, batch_size: int = 64) -> list[dict]:
        "The model's greedy reply at every decision, scored as in training (`match`: it is the demonstrator's)."
        trie, prompts, rows = command_trie(tokenizer, self.task), self.dataset['prompt'], []
        for s in range(0, len(prompts), batch_size):
            batch = prompts[s:s + batch_size]
            contexts = [encode(tokenizer, render(tokenizer, p, True)) for p in batch]
            replies = sample_replies(model, tokenizer, contexts, trie, self.max_new_tokens, greedy=True)
            rows += [self.score(p, reply_text(tokenizer, ids)) for p, ids in zip(batch, replies)]
        return rows


def _branch_replies(model, tokenizer, contexts, plans, turn: int, trie, max_new_tokens: int,
                    sample_kw: dict) -> list[list[int]]:
    "One turn of branched play: the episode's own command before its turn, a sample at it, greedy after."
    out = [tokenizer.encode(c[turn], add_special_tokens=False) if turn < at else None for c, at in plans]
    for kw, pick in (({**sample_kw, 'greedy': False}, lambda at: turn == at),
                     ({'greedy': True}, lambda at: turn > at)):
        ks = [k for k, (_, at) in enumerate(plans) if pick(at)]
        if not ks: continue
        replies = sample_replies(model, tokenizer, [contexts[k] for k in ks], trie, max_new_tokens, **kw)
        for k, ids in zip(ks, replies): out[k] = ids
    return out


def play_branched(model, tokenizer, episodes: Sequence[tuple[str, int]], plans: Sequence[tuple[Sequence[str], int]],
                  trie, max_turns: int = 16, system: str = SYSTEM_PROMPT, max_length: int | None = 768,
                  batch_size: int = 64, max_new_tokens: int = 20,
                  **sample_kw) -> tuple[list[Rollout], list[tuple[int, int] | None]]:
    "`play_episodes` with a `(commands, turn)` plan an episode (replayed to `turn`, sampled there, greedy after) and each sample's span."
    if trie is None: raise ValueError('branched play decodes among commands: pass a trie (command_trie)')
    started = [_begin(tokenizer, task, seed, system) for task, seed in episodes]
    rolls, envs, spans = [r for r, _ in started], [e for _, e in started], [None] * len(started)
    for turn in range(max_turns):
        live = _live(rolls, envs, max_length, max_new_tokens)
        for s in range(0, len(live), batch_size):
            idx = live[s:s + batch_size]
            contexts = [rolls[i].prompt_ids + rolls[i].completion_ids for i in idx]
            new = _branch_replies(model, tokenizer, contexts, [plans[i] for i in idx], turn, trie,
                                  max_new_tokens, sample_kw)
            for i, ids in zip(idx, new):
                start = len(rolls[i].completion_ids)
                _advance(rolls[i], envs[i], ids, tokenizer, system, turn == max_turns - 1, trie.mask(ids))
                if turn == plans[i][1]:
                    spans[i] = (start, rolls[i].completion_ids.index(tokenizer.eos_token_id, start) + 1)
    return rolls, spans


class BranchRollouts:
    "A TRL `rollout_func` crediting one decision in the agent's own context: its episode replayed, a branch."
    def __init__(self, task: str = 'task_4_expert', seeds=range(100),
                 after: Sequence[str] = ('inspect_groups',),
                 skip: int = 0, reward: str = 'success', success_bonus: float = 1.0, seed: int = 0,
                 system: str = SYSTEM_PROMPT, max_turns: int = 24, max_new_tokens: int = 20,
                 max_length: int = 3072, log_path: str | Path | None = None):
        from datasets import Dataset
        if reward not in ('success', 'episode'):
            raise ValueError(f"reward is 'success' or 'episode' (the return plus success_bonus); "
                             f"got {reward!r}")
        self.task, self.after, self.skip = task, tuple(after), skip
        self.reward, self.success_bonus = reward, success_bonus
        self.seed, self.system, self.max_turns = seed, system, max_turns
        self.max_new_tokens, self.max_length = max_new_tokens, max_length
        self.log_path, self.log, self.trie = log_path and Path(log_path), [], None
        self.dataset = Dataset.from_list([{'prompt': agent_messages([f'episode {s}'], [], system), 'seed': s}
                                          for s in dict.fromkeys(seeds)])

    def seed_of(self, prompt: list[dict]) -> int: return int(prompt[-1]['content'].split()[1])

    def branch_turn(self, commands: Sequence[str], seed: int, step: int) -> int:
        "A decision right after a command in `after`, past the first `skip` (else any such, else the first)."
        turns = [i + 1 for i, c in enumerate(commands[:-1]) if as_read(c) in self.after]
        return int(np.random.default_rng([self.seed, seed, step]).choice(turns[self.skip:] or turns or [0]))

    def score(self, r: Rollout) -> float:
        "Reward of a branched episode: success, or (`'episode'`) the return plus `success_bonus` for a success."
        return float(r.success) if self.reward == 'success' else r.ret + self.success_bonus * r.success

    def __call__(self, prompts: list, trainer) -> dict:
        "Each seed played greedily once, then its group branched at one of its decisions: TRL's ids and rewards."
        model, tok = trainer.accelerator.unwrap_model(trainer.model), trainer.processing_class
        self.trie = self.trie or command_trie(tok, self.task)
        step, seeds = trainer.state.global_step, [self.seed_of(p) for p in prompts]
        kw = dict(max_turns=self.max_turns, system=self.system, max_length=self.max_length,
                  max_new_tokens=self.max_new_tokens, trie=self.trie)
        firsts = list(dict.fromkeys(seeds))
        own = dict(zip(firsts, play_episodes(model, tok, [(self.task, s) for s in firsts], greedy=True, **kw)))
        plans = {s: (own[s].commands, self.branch_turn(own[s].commands, s, step)) for s in firsts}
        rolls, spans = play_branched(model, tok, [(self.task, s) for s in seeds], [plans[s] for s in seeds],
                                     temperature=trainer.temperature, **kw)
        contexts, completions, masks, rows, group = [], [], [], [], Counter(seeds)
        for r, (a, b) in zip(rolls, spans):
            cmds, turn = plans[r.seed]
            contexts.append(r.prompt_ids + r.completion_ids[:a])
            completions.append(r.completion_ids[a:b]); masks.append(r.mask[a:b])
            rows.append({'step': step, 'seed': r.seed, 'turn': turn, 'reply': r.commands[turn],
                         'own': cmds[turn], 'success': r.success, 'own_success': own[r.seed].success,
                         'return': r.ret, 'reward': self.score(r),
                         'env_seconds': round(r.env_seconds + own[r.seed].env_seconds / group[r.seed], 4)})
        self.log += rows
        if self.log_path: _append_jsonl(self.log_path, rows)
        return {'prompt_ids': contexts, 'completion_ids': completions, 'logprobs': None, 'env_mask': masks,
                'env_return': [r['reward'] for r in rows], 'env_seed': seeds}

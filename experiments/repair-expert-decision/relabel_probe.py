"""Can the repair agent's model learn the expert tier's decisive choice from labels alone, and how many does it take?

On the expert tier success hinges on one choice (`WithoutFixes` of `ablations.py` beside this script: without the
site relabel the inspector succeeds on 0% of seeds 0-39): after cleaning, which site to relabel, read off the agent's
site line (`fixes: 1 relabel_site 0 agree 50%; 2 relabel_site 1 agree 42%; 3 relabel_site 2 agree 7% | budget 26`).
This probe takes that choice alone. A fresh tiny agent (the `tiny-expert` recipe's size unless told) is fine-tuned on
single-turn chats of site lines, each labelled by the inspector's rule (`apply` the relabel of the least-agreeing
site when its agreement is under 60%, else `validate`), and its greedy replies are scored on fresh lines.

The lines are real ones: a site report of expert seed 1000 after cleaning (three relabels listed), its agreements
redrawn for each example (with probability 0.3 all of them 60-100%; else two in 25-60% and one in 0-45%), then
written by `repair.demos.observation_text` and labelled with `repair.agents.site_agreement`, as the agent and the
inspector read them.

    python experiments/repair-expert-decision/relabel_probe.py --train 9000 --epochs 8 --json

Prints one JSON object: the settings; `sft_seconds`; `accuracy` (all test lines), `relabel_accuracy` (lines whose
label is a relabel; chance is one in three) and `validate_accuracy`, each with a Wilson 95% interval (`*_ci`) over
the `--test` lines; `examples`, the first few replies beside their labels.
"""
import argparse, json, re, sys, time
import numpy as np
import torch
from datasets import Dataset
from dataenvgym.stats import proportion_ci
from dataenvgym.lm import SFTSettings, agent_messages, encode, render, _sample_commands, sft_train, tiny_agent
from dataenvgym.repair.agents import InspectorAgent, play_episode, site_agreement
from dataenvgym.repair.env import RepairEnv
from dataenvgym.repair.demos import SYSTEM_PROMPT, observation_text

def site_report(seed: int = 1000):
    "The expert site report the inspector relabels from on `seed` (its second `inspect_groups`, after cleaning)."
    env = RepairEnv('task_4_expert')
    commands = play_episode(env, InspectorAgent(), seed).commands
    second = [i for i, c in enumerate(commands) if c == 'inspect_groups'][1]
    env.reset(seed=seed)
    for command in commands[:second + 1]: obs = env.step(command)
    if len(site_agreement(obs)) != 3 or {r['op'] for r in obs.metadata['recommendations']} != {'relabel_site'}:
        raise RuntimeError(f'seed {seed}: the report does not list three relabels and nothing else')
    return obs

def labelled(report, agree) -> tuple[str, str]:
    "The agent's site line of `report` with the agreements `agree` (percent, one per site), and the inspector's reply."
    values = iter(agree)
    response = re.sub(r'(other sites )(\d+)%', lambda m: f'{m[1]}{next(values)}%', report.response)
    obs = report.model_copy(update={'response': response})
    found = site_agreement(obs)
    worst = min(found, key=found.get)
    n = next(r['n'] for r in obs.metadata['recommendations'] if r['args']['site'] == worst)
    return observation_text(obs), 'validate' if found[worst] >= InspectorAgent().threshold else f'apply {n}'

def example(report, rng: np.random.Generator) -> tuple[str, str]:
    "A site line with agreements drawn at random, and the inspector's reply to it."
    if rng.random() < 0.3: agree = rng.integers(60, 101, 3)
    else: agree = rng.integers(25, 61, 3); agree[rng.integers(3)] = rng.integers(0, 46)
    return labelled(report, agree)

def rate(right: np.ndarray) -> tuple[float, list[float] | None]:
    ci = proportion_ci(int(right.sum()), len(right))
    return round(float(right.mean()), 3), [round(x, 3) for x in ci] if ci else None

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--train', type=int, default=9000, help='labelled site lines to fine-tune on')
    p.add_argument('--epochs', type=float, default=8)
    p.add_argument('--test', type=int, default=600, help='fresh lines to score')
    p.add_argument('--hidden', type=int, default=64); p.add_argument('--layers', type=int, default=3)
    p.add_argument('--lr', type=float, default=SFTSettings().lr)
    p.add_argument('--seed', type=int, default=0, help='the training lines and the model (the test lines: seed + 1)')
    p.add_argument('--json', action='store_true', help='print the JSON object only')
    a = p.parse_args(argv)
    if min(a.train, a.test) < 1 or a.epochs <= 0: p.error('--train and --test need at least 1 line, --epochs > 0')
    report = site_report()
    torch.manual_seed(a.seed)
    rng, test_rng = np.random.default_rng(a.seed), np.random.default_rng(a.seed + 1)
    chats = [{'messages': agent_messages([t], [r], SYSTEM_PROMPT)} for t, r in
             (example(report, rng) for _ in range(a.train))]
    model, tok = tiny_agent(max_length=256, hidden_size=a.hidden, layers=a.layers, intermediate_size=4 * a.hidden,
                            seed=a.seed)
    t0 = time.perf_counter()
    sft_train(model, tok, Dataset.from_list(chats), SFTSettings(epochs=a.epochs, max_length=256, batch_size=16,
                                                                  lr=a.lr, seed=a.seed), progress=not a.json)
    seconds = time.perf_counter() - t0
    test = [example(report, test_rng) for _ in range(a.test)]
    contexts = [encode(tok, render(tok, agent_messages([t], [], SYSTEM_PROMPT), add_generation_prompt=True))
                for t, _ in test]
    replies = [tok.decode(ids, skip_special_tokens=True).strip() for i in range(0, len(contexts), 100)
               for ids in _sample_commands(model, tok, contexts[i:i + 100], greedy=True)]
    right = np.array([got == want for got, (_, want) in zip(replies, test)])
    relabel = np.array([want != 'validate' for _, want in test])
    out = {'train': a.train, 'epochs': a.epochs, 'test': a.test, 'hidden': a.hidden, 'layers': a.layers,
           'lr': a.lr, 'seed': a.seed, 'sft_seconds': round(seconds, 1)}
    for key, mask in [('accuracy', np.ones_like(relabel)), ('relabel_accuracy', relabel),
                      ('validate_accuracy', ~relabel)]:
        out[key], out[f'{key}_ci'] = rate(right[mask]) if mask.any() else (None, None)
    out['examples'] = [{'line': t, 'label': want, 'reply': got} for (t, want), got in zip(test[:3], replies)]
    print(json.dumps(out, indent=None if a.json else 1))

if __name__ == '__main__': sys.exit(main())

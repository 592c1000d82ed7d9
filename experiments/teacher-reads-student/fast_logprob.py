"""Probe: `benchmarks/teacher_speed.py` with the fast step graded by the answer's log-probability (summed over its
tokens, averaged over the validation items) instead of its probability. Run from the repository root:

    python experiments/teacher-reads-student/fast_logprob.py --setup math/missing-skill --plans 24 --self-plans 12 \
        --json --out DIR [--fit JSON]

The `answer_prob` grade's numbers (`noise_floor_points`, `plan_spread_points`) are then log-probability × 100, not
points; the rank correlations are what the probe is for.
"""
import runpy, sys
sys.path.insert(0, 'benchmarks')
import dataenvgym.students.grouped as grouped, dataenvgym.students.tiny as tiny


def answer_logprob(weights, examples, config, pad_id, chunk=256):
    "`[G, N]`: teacher-forced log-probability that each copy writes each example's response + `<eos>`."
    def logprob(logits, targets):
        targets = targets.expand(logits.shape[0], -1, -1)
        token = logits.log_softmax(-1).gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        return (token * (targets != -100)).sum(-1)
    return grouped._teacher_forced(weights, examples, config, pad_id, chunk, logprob)


if __name__ == '__main__':
    tiny._grouped_answer_prob = answer_logprob
    sys.argv = ['teacher_speed.py', *sys.argv[1:]]
    runpy.run_path('benchmarks/teacher_speed.py', run_name='__main__')

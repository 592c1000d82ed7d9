"""LLM teachers end to end against a real local HTTP server: a failing endpoint never corrupts an episode directory,
and the committed recording replays the same episode twice with no server at all."""
import json
from pathlib import Path

import pytest

from dataenvgym.domains.math import MathDomain
from dataenvgym.teaching.llm import LLM, CallCache, LLMConfig, LLMError, ReplayMiss, ScriptedServer
from dataenvgym.teaching.presets import llm_setup
from dataenvgym.teaching.runner import run_episode
from dataenvgym.testing import StandInTeacher

RECORDING = Path(__file__).parents[1] / 'nbs' / 'recordings' / 'skill_tree_tiny.jsonl'
TINY = MathDomain(['add_2digit', 'add_3digit', 'mod_small'])


def _episode_files(out: Path) -> dict[str, bytes]:
    "Every file of the episode except the student weights and timings, by path."
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob('*'))
            if p.is_file() and 'student' not in p.parts and p.name not in ('log.json', 'curves.png', 'summary.md', 'result.jsonl')}


def _flaky(responder, fail_from: int, reply):
    "A script that answers like `responder` for the first `fail_from` requests and with `reply` afterwards."
    seen = []
    def script(request):
        seen.append(request)
        return responder(request) if len(seen) <= fail_from else (reply(request) if callable(reply) else reply)
    return script


@pytest.mark.parametrize('bad', [{'status': 500},                                   # HTTP 500 forever
                                 lambda req: 'this is not JSON',                     # invalid JSON, every re-ask
                                 lambda req: {'arguments': {'wrong_field': 1}}])     # missing fields, every re-ask
def test_failing_endpoint_leaves_a_resumable_episode(tmp_path, bad):
    out = tmp_path / 'episode'
    # discovery (3) + proposer (1) + policy (1) + engine calls come first; fail somewhere inside iteration 1
    with ScriptedServer(_flaky(StandInTeacher(TINY), 6, bad)) as srv:
        llm = LLM(srv.config(http_retries=1), CallCache(tmp_path / 'calls.jsonl', 'auto'))
        env, policy = llm_setup('skill-tree', llm)
        with pytest.raises(LLMError, match=r'scripted \(\w+\)'):
            run_episode(env, policy, out, seed=0, meter=llm.meter, progress=False)
    left = sorted(p.name for p in out.iterdir() if p.name != 'rejections.json')   # the run's record of refused items
    assert left == ['iteration_0', 'run.json'], 'a half-written iteration was left behind'
    # every recorded line is a whole call; nothing half-written
    assert all(json.loads(line)['key'] for line in (tmp_path / 'calls.jsonl').read_text().splitlines())
    # resume against a healthy server: the calls made before the failure are replayed, the episode completes
    with ScriptedServer(StandInTeacher(TINY)) as srv:
        llm = LLM(srv.config(), CallCache(tmp_path / 'calls.jsonl', 'auto'))
        env, policy = llm_setup('skill-tree', llm)
        result = run_episode(env, policy, out, seed=0, meter=llm.meter, progress=False)
    assert result.iterations[-1].iteration == env.config.iterations
    assert {u.module for u in result.usage} == {'discovery', 'proposer', 'engine', 'policy'}


def test_committed_recording_replays_byte_identically(tmp_path):
    runs = []
    for name in 'ab':
        llm = LLM(LLMConfig(model='scripted', base_url='http://127.0.0.1:9/v1'), CallCache(RECORDING, 'replay'))
        env, policy = llm_setup('skill-tree', llm)
        runs.append(run_episode(env, policy, tmp_path / name, seed=0, meter=llm.meter, progress=False))
    assert _episode_files(tmp_path / 'a') == _episode_files(tmp_path / 'b')
    assert runs[0].usage == runs[1].usage and all(u.calls == u.replayed for u in runs[0].usage)
    summary = (tmp_path / 'a' / 'summary.md').read_text()
    assert '| engine | scripted |' in summary and '| **total** |' in summary


def test_replay_of_a_changed_episode_fails_clearly(tmp_path):
    llm = LLM(LLMConfig(model='another-model', base_url='http://127.0.0.1:9/v1'), CallCache(RECORDING, 'replay'))
    env, policy = llm_setup('skill-tree', llm)
    with pytest.raises(ReplayMiss, match="no recorded reply for this Labels call of module 'discovery'"):
        run_episode(env, policy, tmp_path / 'x', seed=0, meter=llm.meter, progress=False)

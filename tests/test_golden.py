"""Behaviour is unchanged by refactoring: replay the golden runs (`tests/golden/record.py`) and compare with the record."""
import json, os, subprocess, sys
from pathlib import Path

GOLDEN = Path(__file__).parent / 'golden'
sys.path.insert(0, str(GOLDEN))
from numerics import NUMERICS  # noqa: E402  (the pinned arithmetic the record was made with)
sys.path.remove(str(GOLDEN))


def test_behaviour_matches_the_golden_record(tmp_path):
    "Every domain × environment `tiny` episode and every repair baseline (3 seeds) gives the recorded digests and results."
    env = {**os.environ, **NUMERICS, 'PYTHONPATH': str(GOLDEN)}
    code = 'import json, record; print(json.dumps(record.record_all(), sort_keys=True))'
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, timeout=900, check=True)
    now, then = json.loads(out.stdout), json.loads((GOLDEN / 'behaviour.json').read_text())
    for part in ('teaching', 'repair'):
        assert now[part].keys() == then[part].keys()
        changed = [k for k in then[part] if now[part][k] != then[part][k]]
        assert not changed, f'{part} runs that changed: {changed}'

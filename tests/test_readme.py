"""README.md is rendered from nbs/index.ipynb and must say the same."""
import re, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tools'))
from render_readme import render  # noqa: E402


def test_readme_matches_index():
    assert (ROOT / 'README.md').read_text() == render(), 'README.md is stale: run python tools/render_readme.py'


def test_readme_states_two_commands():
    text = (ROOT / 'README.md').read_text()
    blocks = re.findall(r'```(?:bash|sh)\n(.*?)```', text, flags=re.S)
    joined = '\n'.join(blocks)
    assert 'pip install' in joined and 'dataenvgym' in joined, 'README must state the install-and-run command'
    assert 'python -m pytest' in joined, 'README must state the test command that CI runs'

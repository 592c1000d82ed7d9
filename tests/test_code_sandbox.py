"""The code sandbox contains hostile code and reports it; the grader never raises on arbitrary text.

Each test runs untrusted code through `dataenvgym.sandbox` (and `dataenvgym.domains.code`) and checks the verdict and that nothing escaped (no
file written outside the sandbox, this process alive, no child process left behind). Where the audit hook (the second
layer) catches an attack first, its `sandbox:` message is what the program sees; where the operating system does, the
error is the kernel's (a missing path, a read-only file system, EPERM). `tests/test_sandbox_redteam.py` switches the
hook off and attacks the kernel layers directly.
"""
import os, signal, socket, tempfile, time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from dataenvgym.domains.code import CodeDomain, extract_code
from dataenvgym.sandbox import Limits, run_program
from dataenvgym.sandbox_grader import run_tests

pytestmark = pytest.mark.bubblewrap          # skipped, with the apt-get command, where bubblewrap is absent
LIMITS = Limits(timeout=1.5, memory_mb=256, output_mb=4)
TESTS = [{'input': '1', 'output': '2', 'testtype': 'functional'}, {'input': '5', 'output': '6', 'testtype': 'functional'}]


def no_children_left():
    "No child processes of this test process remain (zombie or alive)."
    me = str(os.getpid())
    kids = [p for p in os.listdir('/proc') if p.isdigit() and _ppid(p) == me]
    return kids == []


def _ppid(pid: str) -> str:
    try: return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[1]
    except OSError: return ''


def boxes() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob('dataenvgym-box-*')}


@pytest.fixture(autouse=True)
def unharmed(tmp_path, monkeypatch):
    "Around every test: this process survives, and no sandbox directory or child process is left behind."
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))   # this test's own temp folder: other workers' boxes are not ours
    before, pid = boxes(), os.getpid()
    yield
    assert os.getpid() == pid
    assert boxes() <= before
    assert no_children_left()


def test_infinite_loop_times_out():
    start = time.monotonic()
    r = run_program('while True: pass', limits=LIMITS)
    assert r.status == 'timeout' and time.monotonic() - start < LIMITS.timeout + 2.5


def test_loop_that_ignores_the_alarm_is_killed_by_the_wall_clock():
    code = ('import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n'
            'def f(x):\n    while True:\n        try:\n            while True: pass\n        except BaseException: pass')
    start = time.monotonic()
    v = run_tests(code, TESTS, 'f', limits=LIMITS)
    assert v.status == 'timeout' and v.test == 0
    assert time.monotonic() - start < LIMITS.timeout * len(TESTS) + 3


def test_memory_bomb_is_stopped():
    for code in ('x = []\nwhile True: x.append(bytearray(5 * 10**7))', 'x = bytearray(10**10)', 'x = [0] * 10**9'):
        r = run_program(code, limits=LIMITS)
        assert r.status == 'error' and 'MemoryError' in r.error, (code, r)


def test_fork_loop_is_refused():
    for code in ('import os\nwhile True: os.fork()', 'import os\nos.system("echo hi")', 'import subprocess\nsubprocess.run(["ls"])',
                 'import os\nos.execv("/bin/ls", ["ls"])', 'import os\nos.posix_spawn("/bin/ls", ["ls"], {})',
                 'import threading\nthreading.Thread(target=print).start()', 'import multiprocessing as m\nm.Process(target=print).start()'):
        r = run_program(code, limits=LIMITS)
        assert r.status == 'error', (code, r)


@pytest.mark.parametrize('how', [
    'open({p!r}, "w").write("x")',
    'open({p!r}, "a").write("x")',
    'import os\nos.close(os.open({p!r}, os.O_WRONLY | os.O_CREAT))',
    'import os\nos.chdir("/")\nopen({p!r}.lstrip("/"), "w").write("x")',
    'open("../" * 20 + {p!r}.lstrip("/"), "w").write("x")',
    'import os\nos.symlink({p!r}, "link")\nopen("link", "w").write("x")',
    'import os\nfd = os.open(os.path.dirname({p!r}), os.O_RDONLY)\nos.close(os.open(os.path.basename({p!r}), os.O_WRONLY | os.O_CREAT, dir_fd=fd))',
    'import pathlib\npathlib.Path({p!r}).write_text("x")',
    'import shutil\nshutil.copy("/etc/hostname", {p!r})',
])
def test_writing_outside_the_box_is_refused(how):
    target = Path(tempfile.mkdtemp()) / 'escaped.txt'   # a folder of the grader's: the box has its own /tmp
    r = run_program(how.format(p=str(target)), limits=LIMITS)
    assert r.status == 'error', r
    assert not target.exists()
    for top in ('/usr/escaped.txt', '/escaped.txt', '/dev/escaped.txt'):   # and the box's own read-only view
        assert run_program(how.format(p=top), limits=LIMITS).status == 'error', top


def test_changing_files_outside_the_box_is_refused():
    victim = Path(tempfile.mkdtemp()) / 'victim.txt'
    victim.write_text('keep')
    for code in ('import os\nos.remove({p!r})', 'import os\nos.rename({p!r}, "mine")', 'import os\nos.chmod({p!r}, 0o777)',
                 'import os\nos.truncate({p!r}, 0)', 'import shutil\nshutil.rmtree({d!r})'):
        r = run_program(code.format(p=str(victim), d=str(victim.parent)), limits=LIMITS)
        assert r.status == 'error', (code, r)
    assert victim.read_text() == 'keep'


def test_the_box_is_writable():
    r = run_program('import os\nos.mkdir("d")\nopen("d/a.txt", "w").write("ok")\nos.rename("d/a.txt", "b.txt")\nprint(open("b.txt").read())',
                    limits=LIMITS)
    assert (r.status, r.stdout) == ('ok', 'ok\n')


def test_sockets_are_refused():
    for code in ('import socket\nsocket.socket()', 'import socket\nsocket.create_connection(("127.0.0.1", 80))',
                 'import socket\nsocket.socket(socket.AF_UNIX)', 'import urllib.request\nurllib.request.urlopen("http://example.com")'):
        r = run_program(code, limits=LIMITS)
        assert r.status == 'error', (code, r)


def test_killing_the_parent_is_refused():
    for code in ('import os, signal\nos.kill(os.getppid(), signal.SIGKILL)', 'import os, signal\nos.killpg(os.getpgid(os.getppid()), signal.SIGKILL)',
                 'import os, signal\nos.kill(-1, signal.SIGKILL)', 'import os, signal\nos.kill(1, signal.SIGTERM)',
                 f'import os, signal\nos.kill({os.getpid()}, signal.SIGKILL)'):
        r = run_program(code, limits=LIMITS)
        assert r.status == 'error', (code, r)   # refused by the hook; a box sees neither this process nor its parent
    r = run_program('import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\nprint("here")', limits=LIMITS)
    assert r.status in ('ok', 'error'), r   # itself: allowed; the box's pid 1 ignores it, a best-effort child dies of it


def test_escape_hatches_are_closed():
    for code in ('import ctypes', 'import _posixsubprocess', 'import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))',
                 'import resource\nresource.prlimit(0, resource.RLIMIT_CPU, (-1, -1))'):
        r = run_program(code, limits=LIMITS)
        assert r.status == 'error' and 'sandbox' in r.error, (code, r)


def test_output_is_capped():
    r = run_program('while True: print("x" * 10**6)', limits=LIMITS)
    assert r.status == 'error' and r.error == 'output limit exceeded'   # stdout is a pipe, counted as the grader reads it
    assert len(r.stdout) <= LIMITS.output_mb << 20


def test_deep_recursion_is_contained():
    r = run_program('import sys\nsys.setrecursionlimit(10**7)\ndef f(n): return f(n + 1)\nf(0)', limits=LIMITS)
    assert r.status in ('error', 'timeout'), r  # MemoryError, a crash (SIGSEGV) or the time limit, depending on the interpreter


def test_the_child_never_sees_expected_outputs():
    secret = '"the hidden answer 7365"'
    tests = [{'input': '1', 'output': secret, 'testtype': 'functional'}]
    code = 'import sys, os\ndef f(x):\n    return open("/proc/self/cmdline").read() + str(sorted(os.listdir(".")))'
    v = run_tests(code, tests, 'f', limits=LIMITS)
    assert v.status == 'fail' and '7365' not in v.got


def test_grade_many_in_parallel_matches_sequential():
    dom = CodeDomain(limits=LIMITS)
    tasks = dom.tasks(12, seed=5)
    responses = [t.answer if i % 2 else 'def f(): pass' for i, t in enumerate(tasks)]
    par = [a.correct for a in dom.grade_many(tasks, responses, workers=2)]
    assert par == [bool(i % 2) for i in range(12)]


code_text = st.lists(st.text(max_size=8) | st.sampled_from(['\x00', '\ud800', '```', '```python\n', '\n', 'def f(', 'while 1:', '    ']),
                     max_size=30).map(''.join)
TASK = CodeDomain().tasks(1, seed=0)[0]


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=300) | code_text)
def test_grader_never_raises(response):
    a = CodeDomain(limits=Limits(timeout=0.5)).grade(TASK, response)
    assert a.correct is False and a.feedback
    assert isinstance(extract_code(response), str)

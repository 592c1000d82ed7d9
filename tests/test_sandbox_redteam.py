"""Red team: attacks on the code sandbox, each asserting the safe outcome and that nothing is left behind.

Most attacks begin by switching the audit hook off (`BYPASS`: the boot keeps its tables in `__main__`, which any
program can import), so what they meet is the operating system: namespaces, an unprivileged user, seccomp, resource
limits, and a grader that keeps its own deadlines and parses the report defensively. The attacks are grouped as in
issue 21: reads, writes, processes, hook bypasses, unaudited system calls, network, signals to the grader, resource
exhaustion, timing, report forging, leftovers. Around every test: this process survives, the temporary folder is left
empty, no child process remains, and no process is left in any box's PID namespace.
"""
import dataclasses, errno, json, os, re, secrets, signal, site, stat, subprocess, sys, tempfile, time, tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

import dataenvgym
from dataenvgym import sandbox
from dataenvgym.core import Task
from dataenvgym.domains.base import Rejected
from dataenvgym.domains.code import CodeDomain, CodeItem, CodeTest, extract_code
from dataenvgym.teaching.envs import Generated, quality_check
from dataenvgym.sandbox import Limits, SandboxUnavailable, run_program
from dataenvgym.sandbox_grader import run_tests

L = Limits(timeout=0.5, memory_mb=256, output_mb=2, disk_mb=8)
REPO = Path(dataenvgym.__file__).resolve().parents[1]
VENV_SITE = next(p for p in site.getsitepackages() if Path(p, 'hypothesis').exists())
BASE_SITE = sandbox._interpreter()['site'][0]
pytestmark = pytest.mark.bubblewrap          # skipped, with the apt-get command, where bubblewrap is absent
NS = 'import os\nprint("NS=" + os.readlink("/proc/self/ns/pid"), flush=True)\n'
BYPASS = 'import __main__ as b\nb.DENY.clear(); b.DENY_MODULES.clear(); b.PATHS.clear(); b.refuse = lambda what: None\n'
COL = sandbox._ARCHES[os.uname().machine.lower()][0]
NR = {name: nrs[COL] for name, nrs in sandbox._SYSCALLS.items()} | {'clone': sandbox._CLONE[COL], 'clone3': sandbox._CLONE3[COL],
                                                                    'fallocate': (285, 47)[COL]}
SYSCALL = BYPASS + ('import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n'
                    'def sc(nr, *args):\n    r = libc.syscall(nr, *[ctypes.c_long(a) for a in args])\n'
                    '    print("ret", r, "errno", ctypes.get_errno(), flush=True)\n')
EPERM = 'ret -1 errno 1'


def in_namespace(ns: str, zombies: bool = True) -> list[str]:
    "The processes on this machine in the PID namespace `ns` (as /proc/self/ns/pid names it), zombies too unless told."
    out = []
    for p in os.listdir('/proc'):
        try:
            if p.isdigit() and os.readlink(f'/proc/{p}/ns/pid') == ns and (zombies or _state(p) != 'Z'): out.append(p)
        except OSError: pass
    return out


def _state(pid: str) -> str: return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0]


def _ppid(pid: str) -> str: return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[1]


def children() -> list[str]:
    "This process's children, zombies included."
    return descendants(os.getpid(), depth=1)


def descendants(pid: int, depth: int = 3) -> list[str]:
    "The processes below `pid`, up to `depth` generations."
    level, out = {str(pid)}, []
    for _ in range(depth):
        level = {p for p in os.listdir('/proc') if p.isdigit() and _safe(_ppid, p) in level}
        out += sorted(level)
    return out


def _safe(f, p):
    try: return f(p)
    except (OSError, IndexError): return ''


@pytest.fixture(autouse=True)
def nothing_left(tmp_path, monkeypatch):
    "This process survives; the temporary folder stays empty; no child is left."
    tmp = tmp_path / 'tmp'
    tmp.mkdir()
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp))
    pid = os.getpid()
    yield
    assert os.getpid() == pid
    assert list(tmp.iterdir()) == []
    assert children() == []


def run(code: str, limits: Limits = L, **kw) -> sandbox.Run:
    "`run_program` on `code`, checking afterwards that no process is alive in the box's PID namespace (its init's zombie is the machine's to reap)."
    r = run_program(NS + code, limits=limits, **kw)
    if m := re.search(r'NS=(pid:\[\d+\])', r.stdout): assert gone(m[1]), r
    return r


def gone(ns: str, seconds: float = 3) -> bool:
    "Is no process alive in the PID namespace `ns`, within `seconds` (bwrap's init may still be on its way out)?"
    deadline = time.monotonic() + seconds
    while in_namespace(ns, zombies=False) and time.monotonic() < deadline: time.sleep(0.01)
    return not in_namespace(ns, zombies=False)


failed = lambda r: r.status != 'ok'
refused = lambda r: EPERM in r.stdout and 'ret 0' not in r.stdout
HOST_NULL_MODE = stat.S_IMODE(os.stat('/dev/null').st_mode)
CORE_PATTERN = Path('/proc/sys/kernel/core_pattern').read_text()

ATTACKS = {   # 'category: what' -> (code, is the outcome safe?)
    # reads
    'reads: the grader\'s memory through /proc/<ppid>/mem': (BYPASS + 'import os\nf = open(f"/proc/{os.getppid()}/mem", "rb")\nf.seek(0x400000)\nprint(f.read(64))', failed),
    'reads: /etc/shadow': (BYPASS + 'print(open("/etc/shadow").read())', failed),
    'reads: the repository': (BYPASS + f'print(open({str(REPO / "pyproject.toml")!r}).read())', failed),
    'reads: the repository through /proc/1/root': (BYPASS + f'print(open("/proc/1/root" + {str(REPO / "pyproject.toml")!r}).read())', failed),
    'reads: the repository through a dir_fd': (BYPASS + f'import os\nfd = os.open("/", os.O_RDONLY)\nprint(os.read(os.open({str(REPO / "pyproject.toml").lstrip("/")!r}, os.O_RDONLY, dir_fd=fd), 99))', failed),
    'reads: the repository through sqlite3': (BYPASS + f'import sqlite3\nsqlite3.connect("file:" + {str(REPO / "pyproject.toml")!r} + "?mode=ro", uri=True).execute("select 1").fetchall()', failed),
    'reads: this package by import': (BYPASS + f'import sys\nsys.path.insert(0, {str(REPO)!r})\nimport dataenvgym', failed),
    'reads: the base site-packages': (BYPASS + f'import os\nprint(os.listdir({BASE_SITE!r}))', lambda r: failed(r) or r.stdout.splitlines()[-1] == '[]'),
    # writes
    'writes: /usr, / and /dev are read-only': (BYPASS + 'import os\nfor p in ("/usr/dataenvgym-escape", "/dataenvgym-escape", "/dev/dataenvgym-escape"):\n    try: os.mkdir(p); print("made", p)\n    except OSError as e: print(e)',
                                                lambda r: 'made' not in r.stdout and not os.path.exists('/usr/dataenvgym-escape')),
    'writes: chmod the host\'s /dev/null': (BYPASS + 'import os\nos.chmod("/dev/null", 0o600)', lambda r: failed(r) and stat.S_IMODE(os.stat('/dev/null').st_mode) == HOST_NULL_MODE),
    'writes: the kernel\'s core_pattern': (BYPASS + 'open("/proc/sys/kernel/core_pattern", "w").write("|/bin/sh -c id")', lambda r: failed(r) and Path('/proc/sys/kernel/core_pattern').read_text() == CORE_PATTERN),
    'writes: other sysctls': (BYPASS + 'for p in ("/proc/sys/vm/drop_caches", "/proc/sys/fs/file-max", "/proc/sys/kernel/hostname"):\n    try: open(p, "w").write("3"); print("wrote", p)\n    except OSError as e: print(e)', lambda r: 'wrote' not in r.stdout),
    'writes: through a symlink out of /tmp': (BYPASS + 'import os\nos.symlink("/usr/lib", "/tmp/l")\nopen("/tmp/l/dataenvgym-escape", "w")', lambda r: failed(r) and not os.path.exists('/usr/lib/dataenvgym-escape')),
    # processes
    'processes: fork': (BYPASS + 'import os\nprint("child", os.fork())', lambda r: failed(r) and 'child' not in r.stdout),
    'processes: a setsid child through subprocess': (BYPASS + 'import subprocess\nsubprocess.Popen(["/usr/bin/sleep", "60"], start_new_session=True)', failed),
    'processes: posix_spawn': (BYPASS + 'import os\nos.posix_spawn("/usr/bin/sleep", ["sleep", "60"], {})', failed),
    'processes: a thread, with _thread restored': (BYPASS + 'import sys\nsys.modules.pop("_thread")\nimport _thread\n_thread.start_new_thread(print, ("thread",))', lambda r: failed(r) and 'thread' not in r.stdout),
    'processes: a fork bomb': (BYPASS + 'import os\nwhile True:\n    try: os.fork()\n    except OSError: pass', failed),
    'processes: exec a program that reads the parent': (BYPASS + 'import os\nos.execv("/usr/bin/cat", ["cat", f"/proc/{os.getppid()}/environ"])', lambda r: 'PATH=' not in r.stdout),
    # hook bypasses
    'hook bypasses: the hook\'s code replaced (found through gc), then ctypes ptrace': (
        'import gc\nh = next(f for f in gc.get_objects() if getattr(f, "__name__", "") == "hook" and hasattr(f, "__code__"))\n'
        'h.__code__ = (lambda event, args: None).__code__\nimport ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n'
        f'print("ret", libc.syscall({NR["ptrace"]}, 16, os.getppid(), 0, 0), "errno", ctypes.get_errno())', refused),
    'hook bypasses: _posixsubprocess loaded under another name, fork_exec': (
        'import importlib.util as u, os, sys\nd = next(p for p in sys.path if p.endswith("lib-dynload"))\n'
        'f = next(x for x in os.listdir(d) if x.startswith("_posixsubprocess"))\n'
        'spec = u.spec_from_file_location("x._posixsubprocess", d + "/" + f)\nm = u.module_from_spec(spec)\nspec.loader.exec_module(m)\n'
        'r, w = os.pipe()\nm.fork_exec([b"/usr/bin/sleep", b"60"], [b"/usr/bin/sleep"], True, (), None, None, -1, -1, -1, -1, -1, -1,'
        ' r, w, True, True, -1, None, None, None, -1, None, False)', failed),
    'hook bypasses: _cffi_backend from the virtual environment': (f'import sys\nsys.path.insert(0, {VENV_SITE!r})\nimport _cffi_backend', lambda r: 'ModuleNotFoundError' in r.error),
    'hook bypasses: os.path.realpath monkeypatched': ('import os\nos.path.realpath = lambda p: "/tmp/x"\nopen("/usr/dataenvgym-escape", "w")', lambda r: failed(r) and not os.path.exists('/usr/dataenvgym-escape')),
    'hook bypasses: a subinterpreter (no hook) reads the parent': (BYPASS + 'import _xxsubinterpreters as s\ns.run_string(s.create(), "import os; print(open(f\'/proc/{os.getppid()}/environ\').read())")', lambda r: 'PATH=' not in r.stdout),
    # unaudited system calls
    'unaudited calls: mknod a block device': (BYPASS + 'import os, stat\nos.mknod("/tmp/disk", stat.S_IFBLK | 0o600, os.makedev(8, 0))', lambda r: 'Operation not permitted' in r.error),
    'unaudited calls: mkfifo': ('import os\nos.mkfifo("/tmp/fifo")', lambda r: 'Operation not permitted' in r.error),
    'unaudited calls: shm_open': (BYPASS + 'import _posixshmem, os\n_posixshmem.shm_open("/x", os.O_CREAT | os.O_RDWR, 0o600)', failed),
    'unaudited calls: SysV shared memory': (SYSCALL + f'sc({NR["shmget"]}, 0, 1 << 20, 0o1600)', refused),
    'unaudited calls: memfd_create': ('import os\nos.memfd_create("x")', lambda r: 'Operation not permitted' in r.error),
    'unaudited calls: pidfd_open on the parent': ('import os\nos.pidfd_open(os.getppid())', lambda r: 'Operation not permitted' in r.error),
    'unaudited calls: pidfd_send_signal': (SYSCALL + f'sc({NR["pidfd_send_signal"]}, 0, 9, 0, 0)', refused),
    'unaudited calls: setpriority on the parent and the user': ('import os\nfor w, who in ((os.PRIO_PROCESS, os.getppid()), (os.PRIO_USER, 0)):\n    try: os.setpriority(w, who, 19); print("niced")\n    except OSError as e: print(e)', lambda r: 'niced' not in r.stdout and r.stdout.count('Operation not permitted') == 2),
    'unaudited calls: ioctl FS_IOC_SETFLAGS (immutable)': ('import fcntl, struct\nf = open("/tmp/f", "w")\nfcntl.ioctl(f, 0x40086602, struct.pack("l", 0x10))', lambda r: 'Operation not permitted' in r.error),
    'unaudited calls: ioctl TIOCSTI': ('import fcntl\nfcntl.ioctl(0, 0x5412, b"x")', lambda r: 'Operation not permitted' in r.error),
    'unaudited calls: ptrace attach': (SYSCALL + f'import os\nsc({NR["ptrace"]}, 16, os.getppid(), 0, 0)', refused),
    'unaudited calls: process_vm_readv': (SYSCALL + f'import os\nsc({NR["process_vm_readv"]}, os.getppid(), 0, 0, 0, 0, 0)', refused),
    'unaudited calls: unshare and clone into new namespaces': (SYSCALL + f'sc({NR["unshare"]}, 0x10000000)\nsc({NR["clone"]}, 0x10000000 | 17, 0, 0, 0, 0)\nsc({NR["setns"]}, 0, 0)', lambda r: r.stdout.count(EPERM) == 3),
    'unaudited calls: mount': (SYSCALL + f'sc({NR["mount"]}, 0, 0, 0, 0, 0)', refused),
    'unaudited calls: keyrings, bpf, perf, userfaultfd, io_uring': (SYSCALL + ''.join(f'sc({NR[n]}, 0, 0, 0, 0, 0)\n' for n in ('keyctl', 'add_key', 'bpf', 'perf_event_open', 'userfaultfd', 'io_uring_setup')),
                                                                    lambda r: r.stdout.count(EPERM) == 6),
    # network
    'network: TCP to the internet': (BYPASS + 'import socket\nsocket.create_connection(("1.1.1.1", 53), timeout=2)', failed),
    'network: name resolution': (BYPASS + 'import socket\nprint(socket.getaddrinfo("example.com", 80))', failed),
    'network: netlink and unix sockets': (BYPASS + 'import socket\nfor fam in (socket.AF_NETLINK, socket.AF_UNIX, socket.AF_PACKET):\n    try: socket.socket(fam, socket.SOCK_RAW if fam != socket.AF_UNIX else socket.SOCK_STREAM); print("socket", fam)\n    except OSError as e: print(e)',
                                          lambda r: 'socket' not in r.stdout.replace('NS=', '')),
    'network: only a loopback interface': ('print(open("/proc/net/dev").read())', lambda r: [l.split(':')[0].strip() for l in r.stdout.splitlines()[3:] if l.strip()] in ([], ['lo'])),
    # signals to the grader
    'signals: SIGKILL to the parent': (BYPASS + 'import os, signal\nos.kill(os.getppid(), signal.SIGKILL)', lambda r: True),
    'signals: SIGKILL to everyone': (BYPASS + 'import os, signal\nos.kill(-1, signal.SIGKILL)', lambda r: True),
    'signals: SIGKILL to the grader by its pid': (BYPASS + f'import os, signal\nos.kill({os.getpid()}, signal.SIGKILL)', lambda r: 'No such process' in r.error),
    'signals: SIGSTOP to the parent\'s group': (BYPASS + 'import os, signal\nos.killpg(os.getpgid(os.getppid()), signal.SIGSTOP)', lambda r: True),
    # resource exhaustion
    'resources: memory': ('x = []\nwhile True: x.append(bytearray(10**7))', lambda r: 'MemoryError' in r.error),
    'resources: anonymous mmap': ('import mmap\nm = mmap.mmap(-1, 1 << 30)', lambda r: 'Cannot allocate memory' in r.error),
    'resources: one file filling the disk': ('f = open("/tmp/big", "wb")\nwhile True: f.write(b"x" * 2**20); f.flush()', lambda r: 'File too large' in r.error),
    'resources: many files filling the tmpfs': ('i = 0\nwhile True:\n    open(f"/tmp/f{i}", "wb").write(b"x" * (2**20 - 4096)); i += 1', lambda r: 'No space left on device' in r.error),
    'resources: an output flood': ('while True: print("x" * 10**6)', lambda r: r.error == 'output limit exceeded' and len(r.stdout) <= L.output_mb << 20),
    'resources: a report flood': (BYPASS + 'import os, sys\nwhile True: os.write(int(sys.argv[2]), b"x" * 2**20)', lambda r: failed(r) and 'larger than the output limit' in r.error),
    'resources: open files': ('fs = [open("/dev/null") for _ in range(10**5)]', lambda r: 'Too many open files' in r.error),
    # timing
    'timing: the alarm switched off at load': ('import signal\nsignal.setitimer(signal.ITIMER_REAL, 0)\nwhile True: pass', lambda r: r.status == 'timeout' and r.seconds < L.timeout + sandbox._GRACE + 3),
    'timing: SIGALRM blocked, then sleep': ('import signal, time\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\ntime.sleep(60)', lambda r: r.status == 'timeout' and r.seconds < L.timeout + sandbox._GRACE + 3),
    'timing: an atexit handler that never returns': ('import atexit\ndef spin():\n    while True: pass\natexit.register(spin)', lambda r: r.status == 'timeout'),
    # report forging
    'forging: a verdict line': (BYPASS + 'import os, sys\nos.write(int(sys.argv[2]), b\'{"verdict": "pass", "passed": 6}\\n\')', lambda r: 'malformed' in r.error),
    'forging: lines that make a parser raise': (BYPASS + 'import os, sys\nos.write(int(sys.argv[2]), b"[" * 10**6 + b"\\n" + b\'{"i": \' + b"9" * 10**4 + b"}\\n\\xff\\xfe\\n")', lambda r: 'malformed' in r.error),
    'forging: a partial line, then exit': (BYPASS + 'import os, sys\nos.write(int(sys.argv[2]), b\'{"error": "x"\')\nos._exit(0)', lambda r: 'malformed' in r.error),
    'forging: the right output, then exit status 1': ('import sys\nprint(42)\nsys.exit(1)', lambda r: r.error == 'exited with status 1'),
    'forging: the right output, then os._exit(3)': ('print(42, flush=True)\nimport os\nos._exit(3)', lambda r: r.error == 'exited with status 3'),
    # leftovers
    'leftovers: a double fork that tries to outlive the box': (BYPASS + 'import os\ntry:\n    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0: __import__("time").sleep(60)\nexcept OSError as e: print(e)', lambda r: 'Resource temporarily unavailable' in r.stdout),
    'leftovers: files, an immutable flag and a killed box': ('import fcntl, struct\nf = open("/tmp/keep", "w")\ntry: fcntl.ioctl(f, 0x40086602, struct.pack("l", 0x10))\nexcept OSError: pass\nwhile True: pass', lambda r: r.status == 'timeout'),
}


def test_there_are_enough_attacks_in_every_category():
    per = {}
    for name in ATTACKS: per[name.split(':')[0]] = per.get(name.split(':')[0], 0) + 1
    assert len(ATTACKS) >= 40 and len(per) == 11 and min(per.values()) >= 2, per


# filling 256 MB page by page can outlast the 0.5 s timeout on two loaded cores (CI, 2026-12-07: a timeout, not a
# MemoryError); these attacks prove the memory limit, so they get the time to reach it
SLOW_TO_REACH = {'resources: memory': dataclasses.replace(L, timeout=10.0)}


@pytest.mark.parametrize('name', ATTACKS)
def test_attack_is_contained(name):
    code, safe = ATTACKS[name]
    r = run(code, SLOW_TO_REACH.get(name, L))
    assert safe(r), r


# ---- attacks that need the grader's side set up --------------------------------------------------------------------

def test_the_graders_environment_and_files_do_not_leak(tmp_path, monkeypatch):
    secret = secrets.token_hex(16)
    monkeypatch.setenv('DATAENVGYM_TEST_API_KEY', secret)
    job = tmp_path / 'other-submission.json'
    job.write_text(json.dumps({'expected': secret}))
    code = BYPASS + f'''import os
found = [str(dict(os.environ)), str(os.listdir("/tmp"))]
for p in os.listdir("/proc"):
    for what in ("environ", "cmdline"):
        try: found.append(open(f"/proc/{{p}}/{{what}}", "rb").read().decode(errors="replace"))
        except OSError: pass
for path in ({str(job)!r}, {str(tmp_path)!r}):
    try: found.append(open(path).read())
    except OSError: pass
print(len(found), "\\n".join(found))'''
    r = run(code)
    assert r.status == 'ok' and secret not in r.stdout and 'DATAENVGYM_TEST_API_KEY' not in r.stdout, r


def test_writes_never_reach_the_graders_files(tmp_path):
    victim, target = tmp_path / 'victim.txt', tmp_path / 'escaped.txt'
    victim.write_text('keep')
    for how in (f'open({str(target)!r}, "w").write("x")', f'import os\nos.remove({str(victim)!r})',
                f'import os\nos.symlink({str(victim)!r}, "/tmp/l")\nopen("/tmp/l", "w").write("x")',
                f'import shutil\nshutil.rmtree({str(tmp_path)!r})'):
        assert run(BYPASS + how).status == 'error', how
    assert victim.read_text() == 'keep' and not target.exists()


def test_signals_leave_other_processes_alone():
    sleeper = subprocess.Popen(['sleep', '30'])
    try:
        for code in ('import os, signal\nos.kill(-1, signal.SIGKILL)', f'import os, signal\nos.kill({sleeper.pid}, signal.SIGKILL)',
                     'import os, signal\nos.kill(os.getppid(), signal.SIGKILL)'):
            run(BYPASS + code)
        assert sleeper.poll() is None
    finally:
        sleeper.kill(); sleeper.wait()


def test_boxes_graded_in_parallel_do_not_see_each_other():
    code = 'import os, time\nbefore = sorted(os.listdir("/tmp"))\nopen(f"/tmp/mine-{os.getpid()}", "w").write("x")\ntime.sleep(0.2)\nprint(before, sorted(os.listdir("/tmp")))'
    runs = sandbox.run_many(lambda c: run_program(c, limits=L), [(code,)] * 4, workers=4)
    assert all(r.status == 'ok' and re.fullmatch(r"\[\] \['mine-\d+'\]\n", r.stdout) for r in runs), runs


def random_task(n_hidden: int = 4) -> sandbox.Task:
    "A task whose hidden tests expect random strings: only someone who saw them could pass."
    tests = [{'input': json.dumps(i), 'output': json.dumps(secrets.token_hex(16)), 'testtype': 'functional'} for i in range(n_hidden + 1)]
    return sandbox.Task(domain='code', prompt='f', answer='', skill='strings', subskill='str_query', difficulty=1,
                        metadata={'func_name': 'f', 'public_tests': tests[:1], 'hidden_tests': tests[1:]})


THIEF = BYPASS + r'''import os, re
HEX = re.compile(rb'[0-9a-f]{32}')
def memory(pid):
    "Every readable region of a process's memory."
    with open(f'/proc/{pid}/maps') as maps, open(f'/proc/{pid}/mem', 'rb') as mem:
        for line in maps:
            lo, hi = (int(x, 16) for x in line.split()[0].split('-'))
            if line.split()[1][0] == 'r' and hi - lo < 1 << 26:
                try: mem.seek(lo); yield mem.read(hi - lo)
                except (OSError, OverflowError, ValueError): pass
def scan():
    found = set()
    for p in os.listdir('/proc'):
        if not p.isdigit() or p == str(os.getpid()): continue
        for what in ('cmdline', 'environ'):
            try: found |= set(HEX.findall(open(f'/proc/{p}/{what}', 'rb').read()))
            except OSError: pass
        try:
            for chunk in memory(p): found |= set(HEX.findall(chunk))
        except OSError: pass
    for fd in range(64):
        try: os.lseek(fd, 0, 0); found |= set(HEX.findall(os.read(fd, 1 << 22)))
        except OSError: pass
    for top in ('/tmp', '/dev', '/proc/1/root/tmp'):
        for d, _, names in os.walk(top):
            for n in names:
                try: found |= set(HEX.findall(open(os.path.join(d, n), 'rb').read(1 << 20)))
                except OSError: pass
    return sorted(x.decode() for x in found)
FOUND = scan()
print(FOUND)
def f(i): return FOUND[i % len(FOUND)] if FOUND else ''
'''


def test_hidden_random_outputs_are_never_passed():
    task = random_task()
    secrets_ = [json.loads(t['output']) for t in task.metadata['hidden_tests']]
    slow = Limits(timeout=5, memory_mb=256, output_mb=2)
    r = run(THIEF, func_name='f', calls=[t['input'] for t in task.metadata['hidden_tests']], limits=slow)
    assert r.status == 'ok', r   # it ran its search to the end
    assert not any(s in r.stdout or any(s in c.get('got', '') for c in r.calls) for s in secrets_), r
    assert CodeDomain(limits=slow).grade(task, THIEF).correct is False
    forged = BYPASS + 'import os, sys\nw = lambda s: os.write(int(sys.argv[2]), s.encode() + b"\\n")\nw(\'{"ready": true}\')\n' + \
        ''.join(f'w(\'{{"i": {i}, "got": "\\\\"{"0" * 32}\\\\""}}\')\n' for i in range(5)) + 'os._exit(0)'
    a = CodeDomain(limits=L).grade(task, forged)   # forged result lines for a function that was never defined
    assert a.correct is False and 'passed 0/5' in a.feedback, a.feedback


def test_forged_reports_fail_tests_and_never_raise():
    tests = [{'input': '1', 'output': '2', 'testtype': 'functional'}, {'input': '5', 'output': '6', 'testtype': 'functional'}]
    w = BYPASS + 'import os, sys\nw = lambda s: os.write(int(sys.argv[2]), s)\n'
    assert run_tests(w + 'def f(x): return x + 1', tests, 'f', limits=L).status == 'pass'   # the prefix alone is harmless
    for forged in ('w(b\'{"i": 1, "got": "6"}\\n\')\ndef f(x): return x + 1',                     # a result ahead of its call
                   'def f(x):\n    w(b\'{"i": 1, "got": "6"}\\n\')\n    return x + 1',               # a duplicate index
                   'def f(x):\n    w(b\'{"i": true, "got": "2"}\\n\')\n    return x + 1',            # a bool for an index
                   'import atexit\natexit.register(lambda: w(b\'{"ready": true}\\n\'))\ndef f(x): return x + 1',  # a line after the end
                   'def f(x):\n    w(b\'{"i": 0, "got": "\' + b"[" * 10**5 + b\'"}\\n\')\n    os._exit(0)',  # a value nested too deep
                   'def f(x): return True'):                                                   # True is not 2, nor 1
        v = run_tests(w + forged, tests, 'f', limits=L)
        assert v.status != 'pass', (forged, v)
    assert run_tests('def f(x): return True', [{'input': '1', 'output': '1', 'testtype': 'functional'}], 'f', limits=L).status == 'fail'
    assert run_tests('def f(x): return x + 1', tests, 'f', limits=L).status == 'pass'


def test_each_test_has_its_own_deadline_even_with_the_alarm_off():
    code = 'import signal\ndef f(x):\n    signal.setitimer(signal.ITIMER_REAL, 0)\n    while True: pass'
    tests = [{'input': str(i), 'output': '0', 'testtype': 'functional'} for i in range(12)]
    start = time.monotonic()
    v = run_tests(code, tests, 'f', limits=L)   # the whole run's budget would be 12 × 0.5 s
    assert v.status == 'timeout' and v.test == 0 and time.monotonic() - start < L.timeout + sandbox._GRACE + 3


def test_an_oversized_return_value_is_a_failed_test():
    v = run_tests('def f(x): return "x" * (3 << 20)', [{'input': '1', 'output': '"x"', 'testtype': 'functional'}], 'f', limits=L)
    assert v.status == 'error' and 'larger than the output limit' in v.error


def test_grade_many_survives_a_hostile_batch():
    dom = CodeDomain(limits=L)
    tasks = dom.tasks(6, seed=3)
    hostile = [code for code, _ in list(ATTACKS.values())[::9]][:5]
    responses = [tasks[0].answer] + hostile
    attempts = dom.grade_many(tasks, responses, workers=2)
    assert [a.correct for a in attempts] == [True] + [False] * 5


@pytest.mark.parametrize('code', ['import time\ntime.sleep(600)', 'while True: pass'])
def test_a_box_dies_with_its_grader(code):
    grader = subprocess.Popen([sys.executable, '-c', 'from dataenvgym.sandbox import run_program, Limits\n'
                               f'run_program({code!r}, limits=Limits(timeout=60))'])
    mine, seen, box_ns, deadline = os.readlink('/proc/self/ns/pid'), {}, None, time.monotonic() + 30
    while box_ns is None and time.monotonic() < deadline:   # a namespace that lasts (not the start-up probe's box)
        for ns in {_safe(lambda q: os.readlink(f'/proc/{q}/ns/pid'), p) for p in descendants(grader.pid)} - {'', mine}:
            if (seen := {**seen, ns: seen.get(ns, 0) + 1})[ns] >= 20: box_ns = ns
        time.sleep(0.02)
    grader.kill(); grader.wait()
    assert box_ns, 'the box never started'
    assert gone(box_ns, 5)   # (the dead wait for the machine's init to reap them)


# ---- refusing where isolation is impossible ------------------------------------------------------------------------

def test_without_isolation_untrusted_code_is_refused(monkeypatch):
    monkeypatch.setattr(sandbox, '_isolation', lambda: ((), 'bubblewrap is not installed'))
    with pytest.raises(SandboxUnavailable, match='apt-get install bubblewrap.*best-effort'):
        run_program('print(1)', limits=L)
    with pytest.raises(SandboxUnavailable):
        CodeDomain(limits=L).grade(CodeDomain().tasks(1, seed=0)[0], 'def f(): pass')
    assert run_program('print(1)', limits=Limits(isolation='best-effort')).stdout == '1\n'
    monkeypatch.setenv(sandbox._SANDBOX_ENV, 'best-effort')
    assert run_program('print(2)', limits=L).stdout == '2\n'


def test_this_machine_builds_the_box():
    assert sandbox.refusal() == '' and sandbox._isolation_prefix()
    r = run('import os\nprint(os.getuid(), open("/proc/self/status").read())')
    status = dict(l.split(':', 1) for l in r.stdout.splitlines()[2:] if ':' in l)
    assert r.stdout.splitlines()[1].startswith('65534 ') and status['Seccomp'].strip() == '2' and int(status['CapEff'], 16) == 0


# ---- the grader never raises on any response -----------------------------------------------------------------------

SNIPPETS = ['\x00', '\ud800', '```', '```python\n', '\n', 'def f(', 'while 1:', '    ', 'import os\nos._exit(1)\n', 'raise SystemExit(2)\n',
            'import sys\nsys.exit("x")\n', BYPASS, 'import os, sys\nos.write(int(sys.argv[2]), b"{\\"ready\\": true}\\n")\n',
            'print("x" * 100)\n', 'def count(lst): return True\n', 'def count(lst):\n    import os; os.close(1)\n']
responses = st.lists(st.text(max_size=8) | st.sampled_from(SNIPPETS), max_size=12).map(''.join)
TASK = CodeDomain().tasks(1, seed=0)[0]


@settings(max_examples=25, deadline=None)
@given(responses)
def test_grade_never_raises(response):
    a = CodeDomain(limits=Limits(timeout=0.5)).grade(TASK, response)
    assert isinstance(a.correct, bool) and a.feedback


@settings(max_examples=8, deadline=None)
@given(st.lists(responses, min_size=1, max_size=4))
def test_grade_many_never_raises(batch):
    attempts = CodeDomain(limits=Limits(timeout=0.5)).grade_many([TASK] * len(batch), batch, workers=2)
    assert len(attempts) == len(batch) and all(isinstance(a.correct, bool) for a in attempts)


# ---- round 3 (issue 39): nothing of the host reaches the box, no grade hurts the grader, limits mean what they say ---
# Each test below failed on the sandbox before this round (run against it, 2026-12-03) and passes now.

def functional(i: str, o: str) -> dict: return {'input': i, 'output': o, 'testtype': 'functional'}


def grader_peak_mb(fn) -> tuple[Any, float]:
    "`fn()` and the peak of the grader's Python allocations while it ran, in MB (buffers, parsed values, strings)."
    tracemalloc.start()
    try: return fn(), tracemalloc.get_traced_memory()[1] / 2**20
    finally: tracemalloc.stop()


def test_round3_the_box_holds_no_host_file():
    "stdin, stdout and stderr are pipes: fallocate(KEEP_SIZE) on them takes no host disk (it took 1,280 MiB in 3 ms)."
    r = run(SYSCALL + 'import os, stat\nprint([stat.S_ISFIFO(os.fstat(i).st_mode) for i in (0, 1, 2)], flush=True)\n'
            f'for fd in (0, 1, 2): sc({NR["fallocate"]}, fd, 1, 0, 1 << 26)')   # FALLOC_FL_KEEP_SIZE, 64 MiB
    lines = r.stdout.splitlines()
    assert lines[1] == '[True, True, True]' and not any(l.startswith('ret 0') for l in lines), r


def test_round3_o_direct_on_stdout_loses_no_verdict():
    "O_DIRECT set on stdout made the grader's read raise, and grade_many lost the whole batch."
    dom = CodeDomain(limits=L)
    tasks = dom.tasks(3, seed=5)
    odirect = BYPASS + ('import fcntl, mmap, os\nfcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_DIRECT)\n'
                        'page = mmap.mmap(-1, 4096)\npage.write(b"x" * 4096)\nos.write(1, page)\n')   # an aligned write: accepted
    attempts = dom.grade_many(tasks, [tasks[0].answer, odirect + tasks[1].answer, tasks[2].answer], workers=2)
    assert [a.correct for a in attempts] == [True, True, True], [a.feedback for a in attempts]


def test_round3_a_huge_report_costs_the_grader_little():
    "A 7 MB reply of nested lists used to be parsed (some 200 MB of grader memory); now it is refused unread."
    big = Limits(timeout=2, memory_mb=256, output_mb=8, disk_mb=8)
    forged = (BYPASS + 'import os, sys\ndef f(x):\n    os.write(int(sys.argv[2]), b\'{"i": 0, "got": "[\' + b"[[0]], " * 1_000_000'
              ' + b\'[[0]]]"}\\n\')\n    os._exit(0)')   # a 7 MB reply, written straight into the report
    v, mb = grader_peak_mb(lambda: run_tests(forged, [functional('1', '[0]')], 'f', limits=big))
    assert v.status != 'pass' and mb < 64, (v, mb)


def test_round3_a_line_of_tokens_costs_the_grader_little():
    "A 4 MB line of tokens against a 3-character expected output used to be split into hundreds of MB of lists."
    big = Limits(timeout=2, memory_mb=256, output_mb=8, disk_mb=8)
    v, mb = grader_peak_mb(lambda: run_tests('print("1 " * 2_000_000)', [{'input': '', 'output': '1 2', 'testtype': 'stdin'}],
                                             limits=big))
    assert v.status != 'pass' and mb < 64, (v, mb)


@pytest.mark.skipif(not sandbox._memory_cgroup(), reason='no memory cgroup here: the documented fallback')
def test_round3_kernel_memory_of_empty_folders_is_capped():
    "Empty folders cost the tmpfs no block but ~1.2 KiB of kernel memory each; the box's cgroup caps them with the rest."
    small = Limits(timeout=6, memory_mb=48, output_mb=2, disk_mb=8)   # the box's cgroup: 48 + 8 + 32 MB
    r = run(BYPASS + 'import os\nn = 0\ntry:\n    while True: os.mkdir(f"/tmp/{n}"); n += 1\nexcept OSError as e: print(n, e)',
            limits=small)
    assert 'Cannot allocate memory' in r.stdout or r.error == 'killed (out of memory?)', r


def test_round3_a_call_past_its_limit_and_the_slack_is_a_timeout():
    "A call of 1.7 s passed a 1 s limit (the grader waited the limit plus a second); the slack is now 10%."
    one = Limits(timeout=1.0, memory_mb=256, output_mb=2, disk_mb=8)
    late = 'import signal, time\ndef f(x):\n    signal.setitimer(signal.ITIMER_REAL, 0)\n    time.sleep({})\n    return x'
    assert run_tests(late.format(1.3), [functional('1', '1')], 'f', limits=one).status == 'timeout'
    assert run_tests(late.format(0.8), [functional('1', '1')], 'f', limits=one).status == 'pass'
    program = 'import signal, time\nsignal.setitimer(signal.ITIMER_REAL, 0)\ntime.sleep(1.3)\nprint(1)'
    assert run_tests(program, [{'input': '', 'output': '1', 'testtype': 'stdin'}], limits=one).status == 'timeout'


def test_round3_a_deeply_nested_expected_output_is_refused_not_raised():
    "A teacher's expected output nesting 100k brackets raised RecursionError out of the grader and crashed the episode."
    deep = [functional('1', '[' * 100_000 + ']' * 100_000)]
    v = run_tests('def f(x): return 1', deep, 'f', limits=L)
    assert v.status == 'error' and 'nested deeper than' in v.error, v
    item = CodeItem(problem='p', func_name='f', program='def f(x): return 1',
                    tests=[CodeTest(input='1', output='[' * 100_000), CodeTest(input='2', output='1')])
    with pytest.raises(Rejected, match='malformed tests'): CodeDomain(limits=L).check_llm_item(item)


@pytest.mark.parametrize('timeout', [float('nan'), float('inf'), -1.0, 0, 'soon', None, 1e9])
def test_round3_a_bad_timeout_in_a_task_is_a_malformed_task(timeout):
    "A task whose `timeout` is not a finite positive number made `grade` raise."
    task = CodeDomain().tasks(1, seed=0)[0]
    bad = task.model_copy(update={'metadata': {**task.metadata, 'timeout': timeout}})
    a = CodeDomain(limits=L).grade(bad, task.answer)
    assert a.correct is False and 'the time limit must be' in a.feedback, a.feedback


def test_round3_code_extraction_is_linear():
    "128k backticks cost the old regular expression 13.7 s of grader CPU; 64k must cost well under a second."
    start = time.process_time()
    for hostile in ('`' * 64_000, '```' + ' ' * 64_000, '```\n' + '\n  ``' * 32_000): extract_code(hostile)
    assert time.process_time() - start < 0.5


def test_round3_a_failing_grader_is_a_failed_verdict(monkeypatch):
    "Any exception inside grade / grade_many (here: the machine out of file descriptors) is a failed attempt with a reason."
    def no_fds(*args, **kwargs): raise OSError(errno.EMFILE, 'Too many open files')
    monkeypatch.setattr(sandbox, '_spawn', no_fds)
    dom = CodeDomain(limits=L)
    attempts = dom.grade_many([TASK, TASK], [TASK.answer, 'def f(): pass'], workers=2)
    assert [a.correct for a in attempts] == [False, False]
    assert all('the grader failed: OSError' in a.feedback for a in attempts), attempts[0].feedback


def test_round3_one_bad_item_is_rejected_not_a_crashed_episode():
    "The teaching loop's quality check turns a grader that raises on one datum into one rejected datum."
    class Raising(CodeDomain):
        def grade(self, task, response): raise RecursionError('maximum recursion depth exceeded')
    dom = Raising(limits=L)
    gens = [Generated(task=t, datum=dom.datum(t, source='test', response=t.answer)) for t in dom.tasks(2, seed=1)]
    kept, rejected = quality_check(dom, gens, set())
    assert kept == [] and rejected == {'grading failed': 2}


def test_round3_small_leaks_are_closed():
    "The kernel command line, bwrap's argv (host paths), the host disk's size, /proc/sys and Debian's packages are out of sight."
    r = run(BYPASS + 'import os\ndef show(what, f):\n    try: print(what, repr(f())[:2000])\n'
            '    except OSError as e: print(what, "refused", e.errno)\n'
            'show("cmdline", lambda: open("/proc/cmdline").read())\nshow("init", lambda: open("/proc/1/cmdline").read())\n'
            'show("disk", lambda: os.statvfs("/usr").f_blocks)\nshow("partitions", lambda: open("/proc/partitions").read())\n'
            'show("sys", lambda: os.listdir("/proc/sys"))\nshow("dist", lambda: os.listdir("/usr/lib/python3/dist-packages"))')
    seen = dict(line.split(' ', 1) for line in r.stdout.splitlines()[1:])
    assert seen['cmdline'] in ("''", 'refused 13'), seen
    assert '--tmpfs' not in seen['init'] and BASE_SITE not in seen['init'], seen
    assert seen['disk'] == 'refused 1' and seen['partitions'] in ("''", 'refused 13'), seen
    assert seen['sys'] == '[]' and seen['dist'] in ('[]', 'refused 2'), seen


def test_round3_hidden_inputs_stay_out_of_feedback_by_default():
    "An error on a hidden test can quote its input (`KeyError: 'SECRET'`); it is shown only with hidden_errors=True."
    task = Task(domain='code', prompt='f', answer='', skill='strings', subskill='str_query', difficulty=1,
                metadata={'func_name': 'f', 'public_tests': [functional('1', '2')], 'hidden_tests': [functional('"SECRET-39"', '0')]})
    response = 'def f(x):\n    if x == 1: return 2\n    raise KeyError(x)'
    assert 'SECRET-39' not in CodeDomain(limits=L).grade(task, response).feedback
    assert 'SECRET-39' in CodeDomain(limits=L, hidden_errors=True).grade(task, response).feedback

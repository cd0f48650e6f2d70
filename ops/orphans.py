"""No process of the stack or the cluster outlives what started it (docs/operations.md, "When a
parent dies").

A process whose parent is killed outright (``kill -9``, the OOM killer) is adopted by init and
runs on, and nothing that supervises the parent's replacement knows it. The pieces here keep
that from happening, or find what it left:

- ``die_with_parent``: Linux's parent-death signal (``prctl(PR_SET_PDEATHSIG)``), set in a child
  before it runs its program, with the race of a parent that died before it was set closed. The
  runner of ``make run`` sets it on its children, ``make cluster``'s runner on supervisord.
- ``guard_embedded_postgres``: a process that stops ``make run``'s embedded PostgreSQL when the
  runner dies without stopping it (the server is a daemon of ``pg_ctl``, nobody's child).
  ``python -m ops.orphans guard-postgres <pgdata>`` is that process.
- ``processes_of``: every process left of a stack or cluster, found by the var directory in its
  environment (``TONGITS_VAR_DIR``, which each of their processes inherits), orphans included.
- ``listening_pids``: the processes listening on a TCP port.

Standard library only: the image has no psutil.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None
# The guard's word that the runner stops the server itself (anything else: it died).
_RUNNER_STOPS_IT = b"runner stops it"
# Smart shutdown waits for the stack's sessions to end; fast shutdown after this long.
GUARD_SMART_SECONDS = 20.0
GUARD_FAST_SECONDS = 30.0
_LISTEN = "0A"  # the TCP state in /proc/net/tcp


def die_with_parent(sig: int, parent: int) -> None:
    """In a child before it runs its program: get ``sig`` when ``parent`` (the process that
    forked it) dies, and at once when it died before the signal was set (the child then
    already belongs to init, and the kernel would never send it)."""
    if _libc is None:
        return
    _libc.prctl(_PR_SET_PDEATHSIG, int(sig))
    if os.getppid() != parent:
        os.kill(os.getpid(), sig)


def wait_for_exit(pid: int, timeout: float | None = None) -> bool:
    """Whether process ``pid`` ended within ``timeout`` seconds (None: wait for it)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    except (AttributeError, OSError):  # not Linux 5.3 or later: ask every 0.1 s
        deadline = None if timeout is None else time.monotonic() + timeout
        while running(pid):
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)  # readable once it has ended
        return bool(readable)
    finally:
        os.close(fd)


def running(pid: int) -> bool:
    """Running, and not a zombie (which has ended: only its parent has yet to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return stat.rpartition(")")[2].split()[0] != "Z"


# ---------------------------------------------------------------- the embedded PostgreSQL


def guard_embedded_postgres(pgdata: Path) -> subprocess.Popen[bytes]:
    """Start the guard of the embedded server in ``pgdata``: it stops the server if this
    process ends without ``release_guard`` (the pipe it reads closes with this process, however
    it dies). A session of its own: a terminal's Ctrl-C is this process's to act on."""
    return subprocess.Popen(
        [sys.executable, "-m", "ops.orphans", "guard-postgres", str(pgdata)],
        cwd=Path(__file__).resolve().parent.parent,
        stdin=subprocess.PIPE,
        start_new_session=True,
    )


def release_guard(guard: subprocess.Popen[bytes]) -> None:
    """Tell the guard this process stops the server itself, and wait for it to exit."""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        guard.communicate(_RUNNER_STOPS_IT, timeout=5)
    if guard.poll() is None:
        guard.kill()
        guard.wait()


def postmaster_pid(pgdata: Path) -> int | None:
    """The running server's pid from its ``postmaster.pid`` (None when it is not running)."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if running(pid) else None


def run_guard(pgdata: Path) -> int:
    """The guard's life: wait for its starter to end (standard input closes); unless it said
    it stops the server itself, stop the server: smart shutdown first, which lets the stack's
    processes (each told by its own parent-death signal) end their sessions, then fast."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    said = sys.stdin.buffer.read()
    if said == _RUNNER_STOPS_IT:
        return 0
    pid = postmaster_pid(pgdata)
    if pid is None:
        return 0
    print(f"stack: the runner is gone; stopping the embedded PostgreSQL (pid {pid})", flush=True)
    steps = ((signal.SIGTERM, GUARD_SMART_SECONDS), (signal.SIGINT, GUARD_FAST_SECONDS))
    for sig, seconds in steps:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        if wait_for_exit(pid, seconds):
            return 0
    return 1


# ---------------------------------------------------------------- what is left, and where


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.partition(b"=") for item in raw.split(b"\0") if item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, _, v in pairs}


def processes_of(var_dir: Path) -> list[int]:
    """The running processes (not this one) whose ``TONGITS_VAR_DIR`` is ``var_dir`` or inside
    it: everything a stack or cluster on that directory started, and whatever it left."""
    var_dir = var_dir.resolve()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            value = _environ(int(entry.name)).get("TONGITS_VAR_DIR")
        except OSError:  # ended meanwhile, or another user's
            continue
        if value and Path(value).resolve().is_relative_to(var_dir) and running(int(entry.name)):
            found.append(int(entry.name))
    return sorted(found)


def command_line(pid: int) -> str:
    """A process's command line, for a message ('' once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def listening_pids(port: int) -> set[int]:
    """The processes with a socket listening on TCP ``port`` (any address); a socket only
    bound, as gunicorn's arbiter holds the address, is not listening."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == _LISTEN and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{fields[9]}]")
    pids = set()
    if not inodes:
        return pids
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (entry / "fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) in inodes:
                        pids.add(int(entry.name))
                        break
    return pids


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "guard-postgres":
        return run_guard(Path(argv[1]))
    print("usage: python -m ops.orphans guard-postgres <pgdata>", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

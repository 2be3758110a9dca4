"""Processes memtui starts and processes it finds recorded (issue 21, item 7: faults leave nothing behind).

Worker children (the import reader, the dedupe and similarity pools) are *forked* and end when the
process that forked them dies, even by ``kill -9``: on Linux the kernel sends them SIGKILL
(``prctl(PR_SET_PDEATHSIG)``); elsewhere a watchdog thread in the child polls :func:`os.getppid` and
exits once the parent is gone. Without it a child blocked on a full queue outlives its parent for
ever, holding the store's file open.

A maintenance job records the process running it (:func:`process_started`); :func:`process_gone` tells
whether that process has ended, a reused pid included.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from functools import lru_cache
from typing import Any, Callable

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_WATCH_SECONDS = 0.5


def _die_with(parent: int) -> None:
    """In a forked child: end this process when ``parent`` (the pid that forked it) dies."""
    bound = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            bound = libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            bound = False
    if os.getppid() != parent:  # the parent died before the binding took hold
        os._exit(1)
    if not bound:
        threading.Thread(target=_watch, args=(parent,), name="memtui-parent-watch", daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_WATCH_SECONDS)
    os._exit(1)


def _bound_target(parent: int, target: Callable[..., Any], *args: Any) -> Any:
    _die_with(parent)
    return target(*args)


def worker_process(target: Callable[..., Any], args: tuple = (), name: str = "memtui-worker"):
    """A forked, not yet started ``multiprocessing.Process`` running ``target(*args)`` that ends when
    this process dies (daemon too: a normal exit of this process terminates it)."""
    import multiprocessing

    return multiprocessing.get_context("fork").Process(
        target=_bound_target, args=(os.getpid(), target, *args), name=name, daemon=True)


def worker_pool(processes: int):
    """A ``ProcessPoolExecutor`` of ``processes`` forked workers that end when this process dies."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=processes, mp_context=multiprocessing.get_context("fork"),
                               initializer=_die_with, initargs=(os.getpid(),))


def host_name() -> str:
    """This machine's name as recorded on a job row."""
    return socket.gethostname()


@lru_cache(maxsize=1)
def _boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return None


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` split after the command name (field 3, the state, first); None without it."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return raw[raw.rfind(")") + 2:].split()


def process_started(pid: int | None = None) -> str | None:
    """Where and when process ``pid`` (default this one) started: ``<boot id>:<start tick>`` from /proc
    (Linux), so a pid reused after it ended, or after a reboot, is another process; None elsewhere."""
    fields = _stat_fields(os.getpid() if pid is None else pid)
    boot = _boot_id()
    if fields is None or boot is None or len(fields) < 20:
        return None
    return f"{boot}:{fields[19]}"  # field 22, starttime


def process_gone(pid: int, started: str | None) -> bool:
    """Whether process ``pid`` of this host, which started at ``started`` (:func:`process_started`, None:
    unknown), has ended: no such process, a zombie, or another process now holding the pid."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, another user's
    fields = _stat_fields(pid)
    if fields is not None and fields[0] in ("Z", "X"):
        return True
    if started is not None:
        now = process_started(pid)
        if now is not None and now != started:
            return True
    return False

"""The warm command server: start-up is paid once, not per command (issue 22, item 1).

A cold ``memtui show ID`` spends ~0.7 s importing SQLModel, SQLAlchemy, the table models, typer and the
secret detectors before 30 ms of work. The console script (:func:`main`) therefore hands the short
commands (:data:`WARM_COMMANDS`) to a per-user server that has imported all of that once:

* the client (this module at import: standard library only) connects to ``<dir>/<fingerprint>.sock``
  and sends its argv, environment, working directory, umask and text encoding, with its stdin, stdout
  and stderr as file descriptors (``SCM_RIGHTS``); the server forks, the child takes those descriptors
  as 0, 1 and 2 and that environment, runs :func:`memtui.cli.main` as the cold process would, and sends
  back its exit status; the client forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to the child;
* the server is started in the background by the first cold run that wanted it (``start_new_session``,
  one per fingerprint under a ``flock``), stops itself after :data:`IDLE_SECONDS` without a request,
  and stops older servers of this user (a new fingerprint: the code or the environment changed);
* ``<dir>`` is ``$MEMTUI_WARM_DIR``, else ``$XDG_RUNTIME_DIR/memtui``, else ``/tmp/memtui-<uid>``; it
  must be a directory of this user with no group or other access, and the server only serves
  connections from its own user (``SO_PEERCRED``), so the trust is the same as a cold run's;
* the fingerprint hashes the interpreter, ``sys.path`` and the size and mtime of every file of the
  memtui package and of each ``site-packages`` directory: an edited or upgraded install is never served
  by a server that imported the old code.

``MEMTUI_WARM=0`` (or ``off``/``no``/``false``) runs every command cold; ``memtui`` with no command
(the TUI needs the terminal as its controlling tty), long jobs and servers always run cold. A server
that cannot be reached, or a platform without ``AF_UNIX``/``send_fds``, means a cold run: the warm path
only ever saves time.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import struct
import sys

#: commands that run warm: short reads and decisions people script in loops (the TUI, ``edit``, ``demo``,
#: ``maintain``, ``import``, ``mcp`` and ``serve`` keep their own process)
WARM_COMMANDS = frozenset({
    "show", "history", "health", "decide", "undo", "report", "quality", "usage", "replay",
    "duplicates", "merge", "not-duplicates", "not-a-conflict", "promote", "conflicts", "resolve",
    "compactions", "compaction", "undo-decision", "recall", "claim", "decisions", "export", "check",
    "reviewers", "scope", "tokens", "prune", "policy", "lint",
})
_GLOBAL_WITH_VALUE = ("--db", "--actor", "--role")
IDLE_SECONDS = 600  #: env MEMTUI_WARM_IDLE overrides (seconds)
_HEADER = struct.Struct("!I")
_STATUS = struct.Struct("!i")


def _off() -> bool:
    return os.environ.get("MEMTUI_WARM", "").strip().lower() in ("0", "off", "no", "false")


def command_of(argv: list[str]) -> str | None:
    """The command ``argv`` names after the global options (``--db X`` / ``--db=X``...); ``--help``
    when only global options and ``--help`` are given; None for the TUI (no command)."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--help", "-h"):
            return "--help"
        name = arg.partition("=")[0]
        if name in _GLOBAL_WITH_VALUE:
            i += 1 if "=" in arg else 2
            continue
        return None if arg.startswith("-") else arg
    return None


def runtime_dir(create: bool = False) -> str | None:
    """The directory of this user's sockets (see the module docstring), or None when it is missing
    (and not ``create``), not a directory owned by this user, or open to group or others."""
    base = os.environ.get("MEMTUI_WARM_DIR")
    if not base:
        xdg = os.environ.get("XDG_RUNTIME_DIR")
        base = os.path.join(xdg, "memtui") if xdg else f"/tmp/memtui-{os.getuid()}"
    try:
        if create:
            os.makedirs(base, mode=0o700, exist_ok=True)
        st = os.lstat(base)
    except OSError:
        return None
    import stat

    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return base


def fingerprint() -> str:
    """A hex digest of what a server imported: interpreter, ``sys.path``, and (path, size, mtime) of
    every file of the memtui package and of every ``site-packages`` directory on the path (``sys.path[0]``, the script's
    own folder, differs between the console script and ``python -m``)."""
    h = hashlib.sha256()
    h.update(f"{sys.executable}\0{sys.version}\0{sys.path[1:]!r}".encode())  # [0]: the script's folder
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            try:
                st = os.stat(os.path.join(root, name))
            except OSError:
                continue
            h.update(f"{root}/{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    for entry in sys.path:
        if entry.endswith("site-packages"):
            try:
                h.update(f"{entry}\0{os.stat(entry).st_mtime_ns}\n".encode())
            except OSError:
                pass
    return h.hexdigest()[:20]


# -- client ---------------------------------------------------------------------------------------

def _request() -> bytes:
    out = sys.stdout
    return json.dumps({
        "argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(), "umask": _umask(),
        "encoding": getattr(out, "encoding", None) or "utf-8", "errors": getattr(out, "errors", None) or "strict",
    }).encode()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _read_exact(conn: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        try:
            chunk = conn.recv(n - len(data))
        except InterruptedError:
            continue
        if not chunk:
            return None
        data += chunk
    return data


def run_warm(directory: str, fp: str) -> int | None:
    """Run this process's command in the server for ``fp``; its exit status, or None when no server
    answered before the command started (nothing ran: the caller runs it cold)."""
    path = os.path.join(directory, f"{fp}.sock")
    if not os.path.exists(path) or not hasattr(socket, "send_fds"):
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
        if uid != os.getuid():
            return None
        body = _request()
        socket.send_fds(conn, [_HEADER.pack(len(body)) + body], [0, 1, 2])
        started = _read_exact(conn, _STATUS.size)
    except OSError:
        conn.close()
        return None
    if started is None:
        conn.close()
        return None
    child = _STATUS.unpack(started)[0]

    def forward(signum, _frame):
        try:
            os.kill(child, signum)
        except OSError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, forward)
    status = _read_exact(conn, _STATUS.size)
    conn.close()
    if status is None:
        print("memtui: the command's process ended without an exit status", file=sys.stderr)
        return 1
    return _STATUS.unpack(status)[0]


def _spawn_server(directory: str, fp: str) -> None:
    """Start the server for ``fp`` in the background (its own session, no terminal, no output)."""
    import subprocess

    try:
        subprocess.Popen([sys.executable, "-m", "memtui.cli.warm", directory, fp], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         close_fds=True, cwd="/")
    except OSError:
        pass


def main() -> None:
    """Console-script entry point: a warm command when one can run warm, else the cold process
    (:func:`memtui.cli.main`), starting the server for the next command when there was none."""
    if not _off() and command_of(sys.argv[1:]) in WARM_COMMANDS | {"--help"}:
        directory = runtime_dir(create=True)
        if directory is not None:
            fp = fingerprint()
            status = run_warm(directory, fp)
            if status is not None:
                sys.exit(status)
            _spawn_server(directory, fp)
    from memtui.cli import main as cold_main

    cold_main()


# -- server ---------------------------------------------------------------------------------------

def _preload() -> None:
    """Import what the warm commands use (never a store connection, thread or model: the children fork)."""
    import memtui.cli as cli

    cli.click_group()
    import memtui.governance.reviewers  # noqa: F401
    import memtui.review.lifecycle  # noqa: F401
    import memtui.review.service  # noqa: F401
    import memtui.safety.guard  # noqa: F401
    import memtui.store.engine as engine
    import memtui.store.models  # noqa: F401

    engine.shipped_head()


def _stop_older(directory: str, fp: str) -> None:
    """SIGTERM the other servers of this directory (an older fingerprint) and remove their files."""
    for name in os.listdir(directory):
        if not name.endswith(".pid") or name == f"{fp}.pid":
            continue
        try:
            with open(os.path.join(directory, name)) as f:
                pid = int(f.read().strip())
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"memtui.cli.warm" not in f.read():
                    continue
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError):
            pass


def _child(conn: socket.socket) -> None:
    """Run one request in this forked child: never returns."""
    status = 1
    try:
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        conn.settimeout(10)
        head, fds, _flags, _addr = socket.recv_fds(conn, _HEADER.size, 3)
        if len(head) < _HEADER.size or len(fds) != 3:
            os._exit(1)
        body = _read_exact(conn, _HEADER.unpack(head)[0])
        if body is None:
            os._exit(1)
        request = json.loads(body)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.umask(request["umask"])
        os.environ.clear()
        os.environ.update(request["env"])
        import time

        time.tzset()
        _reopen_std(request["encoding"], request["errors"])
        sys.argv = ["memtui", *request["argv"]]
        conn.settimeout(None)
        conn.sendall(_STATUS.pack(os.getpid()))
        status = _run_cli()
    except BaseException:  # noqa: BLE001 - a child never returns into the server's loop
        status = 1
    try:
        conn.sendall(_STATUS.pack(status))
    except OSError:
        pass
    os._exit(status)


def _reopen_std(encoding: str, errors: str) -> None:
    import io

    def text(fd: int, mode: str, line_buffering: bool):
        raw = io.FileIO(fd, mode, closefd=False)
        buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        return io.TextIOWrapper(buffered, encoding=encoding, errors=errors if fd else "strict",
                                line_buffering=line_buffering, write_through=fd == 2)

    sys.stdin = sys.__stdin__ = text(0, "r", False)
    sys.stdout = sys.__stdout__ = text(1, "w", os.isatty(1))
    sys.stderr = sys.__stderr__ = text(2, "w", True)
    sys.stderr.reconfigure(errors="backslashreplace")


def _run_cli() -> int:
    """:func:`memtui.cli.main` with its exit status (an uncaught error prints its traceback: 1)."""
    import traceback

    from memtui.cli import main as cold_main

    try:
        cold_main()
        status = 0
    except SystemExit as exc:
        code = exc.code
        if code is None:
            status = 0
        elif isinstance(code, int):
            status = code
        else:
            print(code, file=sys.stderr)
            status = 1
    except KeyboardInterrupt:
        status = 130
    except BaseException:  # noqa: BLE001 - as the interpreter would: print it, exit 1
        traceback.print_exc()
        status = 1
    import atexit

    atexit._run_exitfuncs()  # what the interpreter runs at exit (the child leaves with os._exit)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    return status


def serve(directory: str, fp: str) -> None:
    """Serve ``fp``'s socket in ``directory`` until :data:`IDLE_SECONDS` pass without a request."""
    import fcntl

    if runtime_dir() != directory and os.path.realpath(runtime_dir() or "") != os.path.realpath(directory):
        return
    lock = open(os.path.join(directory, f"{fp}.lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another server for this fingerprint is starting or running
    if fingerprint() != fp:
        return  # the code changed between the client's look and now
    _preload()
    _stop_older(directory, fp)
    sock_path = os.path.join(directory, f"{fp}.sock")
    pid_path = os.path.join(directory, f"{fp}.pid")
    stopping = []

    def stop(_signum, _frame):
        stopping.append(True)
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if os.path.exists(sock_path):
            os.unlink(sock_path)
        server.bind(sock_path + ".new")
        os.chmod(sock_path + ".new", 0o600)
        server.listen(64)
        os.replace(sock_path + ".new", sock_path)
        with open(pid_path, "w") as f:
            f.write(str(os.getpid()))
        server.settimeout(float(os.environ.get("MEMTUI_WARM_IDLE") or IDLE_SECONDS))
        while True:
            try:
                conn, _ = server.accept()
            except socket.timeout:
                break
            except InterruptedError:
                continue
            try:
                uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
            except OSError:
                conn.close()
                continue
            if uid != os.getuid():
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                server.close()
                _child(conn)
            conn.close()
    except SystemExit:
        pass
    finally:
        server.close()
        for path in (sock_path, pid_path, lock.name):
            try:
                os.unlink(path)
            except OSError:
                pass


if __name__ == "__main__":  # pragma: no cover - started by _spawn_server
    serve(sys.argv[1], sys.argv[2])

"""``memtui mcp`` over stdio, answering ``initialize`` at once (issue 22 item 2).

Importing the SDK costs 1-3 s on this machine (its protocol types for every revision), opening the
store and reading recall's pool of 10,000 memories as much again. So :func:`serve` starts a
background thread that does all of that -- the store, the recall warm-up (:func:`memtui.recall.warm`,
in a thread of its own), the SDK and its server -- while the main thread reads the client's first
message: an ``initialize`` request of a revision in :data:`HANDSHAKE_VERSIONS` is answered at once
with what the SDK answers (the same capabilities, server info and instructions;
tests/test_mcp_startup.py compares the two). When the SDK is loaded its server runs over the same
stdin and stdout; it is handed that ``initialize`` again, its answer to it is dropped, and then
everything the client sent since, so its session is exactly as if it had answered. A request waits
for the SDK only; a recall waits for the warm-up of its own pool only, never for the rest.

This module imports the standard library only. While serving, fd 0 reads /dev/null and fd 1 writes
to stderr, as under the SDK's own transport, so nothing printed by accident reaches the wire.
``MEMTUI_MCP_FAST_INIT=0``: the SDK answers ``initialize`` itself.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
from typing import Any, Callable

#: Protocol revisions whose ``initialize`` answer is given before the SDK is loaded (the SDK's
#: handshake revisions; another asked-for revision is answered with the newest, as the SDK does).
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: The server's capabilities as the SDK states them for memtui's server (tools, resources, prompts).
CAPABILITIES = {"prompts": {"listChanged": False}, "resources": {"listChanged": False, "subscribe": False},
                "tools": {"listChanged": False}}
SERVER_NAME = "memtui"


def server_version() -> str:
    """memtui's installed version (the server info's ``version``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memtui")
    except PackageNotFoundError:
        return "0"


def instructions(where: str) -> str:
    """The server's instructions for a server serving ``where`` (a scope label or "the whole store")."""
    from memtui.mcp_server import INSTRUCTIONS

    return INSTRUCTIONS + f" This server serves {where}."


def initialize_answer(line: bytes, where: str, version: str | None = None) -> tuple[Any, bytes] | None:
    """``(request id, answer line)`` when ``line`` is a well-formed ``initialize`` request, else None
    (the SDK answers it). ``version``: :func:`server_version`, if already known."""
    try:
        message = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    rid, params = message.get("id"), message.get("params")
    if isinstance(rid, bool) or not isinstance(rid, (int, str)) or not isinstance(params, dict):
        return None
    client = params.get("clientInfo")
    if (not isinstance(params.get("protocolVersion"), str) or not isinstance(params.get("capabilities"), dict)
            or not isinstance(client, dict) or not isinstance(client.get("name"), str)
            or not isinstance(client.get("version"), str) or set(message) - {"jsonrpc", "id", "method", "params"}):
        return None
    requested = params["protocolVersion"]
    result = {"capabilities": CAPABILITIES, "instructions": instructions(where),
              "protocolVersion": requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
              "serverInfo": {"name": SERVER_NAME, "version": version or server_version()}}
    answer = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}, ensure_ascii=False, separators=(",", ":"))
    return rid, answer.encode("utf-8") + b"\n"


def _claim_stdio():
    """The wire (buffered reader of fd 0, writer of fd 1) on private descriptors; fd 0 then reads
    /dev/null and fd 1 writes to stderr."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout.flush()
    os.dup2(2, 1)
    return wire_in, wire_out


class _Loader(threading.Thread):
    """Runs ``build`` (``ready`` set when done); its error is kept for the main thread."""

    def __init__(self, build: Callable[[], Any]):
        super().__init__(name="memtui-mcp-loader", daemon=True)
        self.build, self.server, self.error = build, None, None
        self.ready = threading.Event()

    def run(self) -> None:
        try:
            self.server = self.build()
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the main thread (typer.Exit among them)
            self.error = exc
        self.ready.set()


def serve(build: Callable[[], Any], where: str) -> None:
    """Serve MCP over stdio: ``build()`` (run in the loader thread; it may start the recall warm-up)
    returns the SDK server (:func:`memtui.mcp_server.server.build_server`); ``where`` is what the
    instructions say the server serves. Returns when the client closes the connection; an error of
    ``build`` is raised here."""
    wire_in, wire_out = _claim_stdio()
    fast = os.environ.get("MEMTUI_MCP_FAST_INIT", "1").strip().lower() not in ("0", "off", "no", "false")
    version = server_version() if fast else None  # before the loader competes for the interpreter
    loader = _Loader(build)
    loader.start()
    first: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: first.put(wire_in.readline()), name="memtui-mcp-first", daemon=True).start()
    line = b""
    while True:  # the first message, unless the loader fails first (nothing to serve then)
        try:
            line = first.get(timeout=0.05)
            break
        except queue.Empty:
            if loader.error is not None:
                raise loader.error
    dropped = None
    if line and fast:
        answer = initialize_answer(line, where, version)
        if answer is not None:
            dropped = answer[0]
            wire_out.write(answer[1])
            wire_out.flush()
    loader.ready.wait()
    if loader.error is not None:
        raise loader.error
    if not line:
        return  # the client closed the connection before saying anything
    import anyio

    anyio.run(_run, loader.server, line, wire_in, wire_out, dropped)


async def _run(server, first: bytes, wire_in, wire_out, dropped) -> None:
    """The SDK's server (what ``MCPServer.run_stdio_async`` does) over the claimed wire, the first
    line handed to it again and its answer to ``dropped`` (the id already answered) left out."""
    from mcp.server.stdio import stdio_server

    async with stdio_server(stdin=_Lines(first, wire_in), stdout=_Wire(wire_out, dropped)) as (read, write):
        lowlevel = server._lowlevel_server  # noqa: SLF001 -- as MCPServer.run_stdio_async uses it
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


class _Lines:
    """The client's lines as text: ``first``, then what ``stream`` reads (in a worker thread)."""

    def __init__(self, first: bytes, stream):
        self.first, self.stream = first, stream

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        import anyio

        if self.first is not None:
            line, self.first = self.first, None
        else:
            line = await anyio.to_thread.run_sync(self.stream.readline, abandon_on_cancel=True)
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


class _Wire:
    """The server's side of the wire: writes each message line, except the answer to ``dropped``."""

    _NONE = object()

    def __init__(self, stream, dropped):
        self.stream = stream
        self.dropped = self._NONE if dropped is None else dropped

    async def write(self, text: str) -> None:
        import anyio

        if self.dropped is not self._NONE:
            try:
                message = json.loads(text)
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("id") == self.dropped and (
                    "result" in message or "error" in message):
                self.dropped = self._NONE
                return
        await anyio.to_thread.run_sync(self.stream.write, text.encode("utf-8"))

    async def flush(self) -> None:
        import anyio

        await anyio.to_thread.run_sync(self.stream.flush)

"""The memtui command line: parses, calls services, prints (DESIGN.md, "Layers").

Global options come before the command: ``memtui --db d.db decide ...``; each command also
accepts ``--db``, ``--actor`` and ``--role`` after its name. Exit codes: 0 success, 1 a refused
operation (invariant, transition, invalid import), 2 usage errors. Each ``*_cmds`` module adds its
commands to :data:`memtui.cli.common.app` when imported; ``memtui.cli.app`` imports them all on first
use, so ``memtui`` with no command opens the TUI without typer (:mod:`memtui.cli.launch`).
"""

from __future__ import annotations

import sys

__all__ = ["app", "main"]


def _commands():
    """The typer app with every command registered (the order here is the order of ``memtui --help``)."""
    from memtui.cli import (  # noqa: F401, I001
        store_cmds, review_cmds, maintain_cmds, proposals_cmds, io_cmds, decisions_cmds, reviewers_cmds,
        check_cmds, safety_cmds, mcp_cmds, api_cmds,
    )
    from memtui.cli.common import app

    return app


def __getattr__(name: str):
    if name == "app":
        return _commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Console-script entry point: the TUI directly for ``memtui [--db X] [--actor X] [--role X]``,
    else the typer app."""
    from memtui.cli.launch import run_tui, tui_args

    tui = tui_args(sys.argv[1:])
    if tui is not None:
        sys.exit(run_tui(**tui))
    _commands()(prog_name="memtui")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

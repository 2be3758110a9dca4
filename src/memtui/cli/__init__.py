"""The memtui command line: parses, calls services, prints (DESIGN.md, "Layers").

Global options come before the command: ``memtui --db d.db decide ...``; each command also
accepts ``--db``, ``--actor`` and ``--role`` after its name. Exit codes: 0 success, 1 a refused
operation (invariant, transition, invalid import), 2 usage errors. Each ``*_cmds`` module adds its
commands to :data:`memtui.cli.common.app` when imported.
"""

from __future__ import annotations

import sys

# importing a commands module registers its commands; this order is the order of ``memtui --help``
from memtui.cli import (  # noqa: F401, I001
    store_cmds, review_cmds, maintain_cmds, proposals_cmds, io_cmds, decisions_cmds, reviewers_cmds, check_cmds,
    safety_cmds, mcp_cmds, api_cmds,
)
from memtui.cli.common import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    app(prog_name="memtui")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

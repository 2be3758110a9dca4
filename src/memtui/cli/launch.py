"""Opening the store and naming the actor without typer, and ``memtui`` (no command) straight into the TUI.

``memtui`` with no command, or only the global options ``--db``, ``--actor`` and ``--role``, is the
review queue a reviewer opens many times a day: :func:`tui_args` recognises it and :func:`run_tui`
opens the queue without importing typer or any command module (issue 11, item 8: first row under
0.7 s). Everything else goes through the typer app (:mod:`memtui.cli.common`), whose ``_engine``,
``_actor_name`` and ``_actor`` are these functions with :class:`CommandFailed` turned into its exit.
"""

from __future__ import annotations

import getpass
import os
import sys

from memtui.text import control_problem, visible

_GLOBAL_OPTIONS = ("--db", "--actor", "--role")


class CommandFailed(Exception):
    """The command cannot go on: ``message`` for the user, ``code`` the exit status (1 refused, 2 usage)."""

    def __init__(self, message: str, code: int = 1):
        self.message, self.code = message, code
        super().__init__(message)


def open_engine(db: str | None):
    """The store ``db`` (a path or URL; None: ``MEMTUI_DB`` or memtui.db), migrated. Raises CommandFailed (1)."""
    from memtui.store.engine import StoreError, open_store

    try:
        return open_store(db)
    except StoreError as exc:
        raise CommandFailed(str(exc)) from None


def actor_name(actor: str | None) -> str:
    """Who acts: ``actor``, ``MEMTUI_ACTOR`` or the login name. Raises CommandFailed (2) for a control character."""
    who = actor or os.environ.get("MEMTUI_ACTOR")
    if not who:
        try:
            who = getpass.getuser()
        except Exception:  # no login name in some containers
            who = "unknown"
    if problem := control_problem("--actor", who):  # issue 9 item 5
        raise CommandFailed(problem, 2)
    return who


def acting(engine, actor: str | None, role: str | None):
    """The acting human as the store knows it (:func:`memtui.governance.reviewers.resolve_actor`);
    ``role`` None reads ``MEMTUI_ROLE``. Raises CommandFailed with the refusal's exit code."""
    from memtui.governance.reviewers import GovernanceError, resolve_actor

    source = "--role" if role else "MEMTUI_ROLE"
    declared = role or os.environ.get("MEMTUI_ROLE")
    try:
        return resolve_actor(engine, actor_name(actor), declared, role_source=source)
    except GovernanceError as exc:
        raise CommandFailed(str(exc), exc.exit_code) from None


def tui_args(argv: list[str]) -> dict[str, str] | None:
    """``{"db": ..., "actor": ..., "role": ...}`` (the ones given) when ``argv`` is only global options
    (``--db X`` or ``--db=X``, each at most once); None for anything else (a command, ``--help``)."""
    given: dict[str, str] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name not in _GLOBAL_OPTIONS or name[2:] in given:
            return None
        if not eq:
            if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
                return None
            value = argv[i + 1]
            i += 1
        given[name[2:]] = value
        i += 1
    return given


def run_tui(db: str | None = None, actor: str | None = None, role: str | None = None) -> int:
    """Open the review queue TUI on store ``db`` as ``actor``; returns the exit status (an error is
    printed as ``memtui: ...`` on stderr, as every command prints it)."""
    try:
        engine = open_engine(db)
        who = acting(engine, actor, role)
    except CommandFailed as exc:
        print(visible(f"memtui: {exc.message}"), file=sys.stderr)
        return exc.code
    from memtui.app import MemtuiApp

    MemtuiApp(engine, who).run()
    return 0

"""Opening the store and naming the actor without typer, and ``memtui`` (no command) straight into the TUI.

``memtui`` with no command, or only the global options ``--db``, ``--actor`` and ``--role``, is the
review queue a reviewer opens many times a day: :func:`tui_args` recognises it and :func:`run_tui`
opens the queue without importing typer or any command module (issue 11, item 8: first row under
0.7 s). Everything else goes through the typer app (:mod:`memtui.cli.common`), whose ``_engine``,
``_acting_name`` and ``_actor`` are these functions with :class:`CommandFailed` turned into its exit.
"""

from __future__ import annotations

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


def claimed_actor(actor: str | None) -> tuple[str | None, str]:
    """The name claimed by ``actor`` (``--actor``) or ``MEMTUI_ACTOR``, and which of them said it;
    (None, "--actor") when neither. Raises CommandFailed (2) for a control character."""
    who, source = (actor, "--actor") if actor else (os.environ.get("MEMTUI_ACTOR") or None, "MEMTUI_ACTOR")
    if who and (problem := control_problem("--actor", who)):  # issue 9 item 5
        raise CommandFailed(problem, 2)
    return _screened(who, source), (source if who else "--actor")


def _screened(name: str | None, source: str) -> str | None:
    """``name``, unless it holds a secret: a name is stored in every event it writes and audit rows
    name refused claims, so it is refused before anything is written (issue 21 item 4). Raises
    CommandFailed (2) naming ``source``, never the secret."""
    from memtui.safety.guard import SecretRefused, refuse_secret_fields

    try:
        refuse_secret_fields((source, name))
    except SecretRefused as exc:
        raise CommandFailed(str(exc), 2) from None
    return name


def actor_name(engine, actor: str | None) -> str:
    """Who acts on ``engine``'s store (:func:`memtui.governance.reviewers.acting_name`): with
    reviewers, the connection's identity, which ``--actor``/``MEMTUI_ACTOR`` may only confirm or
    name a reviewer it acts for (issue 21 item 5); without, the claim or the login name.
    Raises CommandFailed (2 a control character or a secret in the name, 1 a refused claim)."""
    from memtui.governance.reviewers import GovernanceError, acting_name

    claimed, source = claimed_actor(actor)
    try:
        return _screened(acting_name(engine, claimed, claim_source=source), "the login name")
    except GovernanceError as exc:
        raise CommandFailed(str(exc), exc.exit_code) from None


def acting(engine, actor: str | None, role: str | None):
    """The acting human as the store knows it (:func:`memtui.governance.reviewers.resolve_connection_actor`:
    the connection's identity on a store with reviewers); ``role`` None reads ``MEMTUI_ROLE``.
    Raises CommandFailed with the refusal's exit code."""
    from memtui.governance.reviewers import GovernanceError, resolve_connection_actor

    source = "--role" if role else "MEMTUI_ROLE"
    declared = role or os.environ.get("MEMTUI_ROLE")
    claimed, claim_source = claimed_actor(actor)
    try:
        who = resolve_connection_actor(engine, claimed, declared, role_source=source, claim_source=claim_source)
        _screened(who.id, "the login name")
        return who
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
    """Open the review queue TUI on store ``db`` as the connection's identity (``actor`` may only
    confirm it, :func:`acting`); returns the exit status (an error is printed as ``memtui: ...`` on
    stderr, as every command prints it)."""
    try:
        engine = open_engine(db)
        who = acting(engine, actor, role)
    except CommandFailed as exc:
        print(visible(f"memtui: {exc.message}"), file=sys.stderr)
        return exc.code
    from memtui.app import MemtuiApp

    MemtuiApp(engine, who).run()
    return 0

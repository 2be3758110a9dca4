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
        store_cmds, review_cmds, maintain_cmds, fix_cmds, proposals_cmds, io_cmds, decisions_cmds,
        reviewers_cmds, check_cmds, safety_cmds, mcp_cmds, api_cmds,
    )
    from memtui.cli.common import app

    _resolve_annotations(app)
    return app


def _resolve_annotations(typer_app) -> None:
    """Evaluate the string annotations (``from __future__ import annotations``) of every command and
    callback once, as typer would. typer evaluates them (``inspect.signature(eval_str=True)``,
    ``get_type_hints``) for every command each time it builds the click group, at every start and every
    ``CliRunner.invoke``: 20 of the 32 ms that takes. Given objects, it has nothing to evaluate; the
    group it builds is the same (every command, option, default and help text)."""
    import inspect

    if getattr(typer_app, "_memtui_annotations_resolved", False):
        return
    callbacks = [typer_app.info.callback]
    if typer_app.registered_callback is not None:
        callbacks.append(typer_app.registered_callback.callback)
    callbacks += [command.callback for command in typer_app.registered_commands]
    for fn in callbacks:
        annotations = getattr(fn, "__annotations__", None)
        if annotations and any(isinstance(a, str) for a in annotations.values()):
            fn.__annotations__ = inspect.get_annotations(fn, eval_str=True)  # what typer would evaluate
    for group in typer_app.registered_groups:
        _resolve_annotations(group.typer_instance)
    typer_app._memtui_annotations_resolved = True


_GROUP = []


def click_group():
    """The click group typer builds from :func:`_commands` (built once per process: the warm server
    builds it before it forks, :mod:`memtui.cli.warm`)."""
    if not _GROUP:
        import typer.main

        _GROUP.append(typer.main.get_command(_commands()))
    return _GROUP[0]


def __getattr__(name: str):
    if name == "app":
        return _commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Console-script entry point: the TUI directly for ``memtui [--db X] [--actor X] [--role X]``,
    else the typer app."""
    from memtui.cli.launch import run_tui, tui_args
    from memtui.domain.integrity import IntegrityKeyError
    from memtui.text import visible

    tui = tui_args(sys.argv[1:])
    if tui is not None:
        sys.exit(run_tui(**tui))
    try:
        click_group()(prog_name="memtui")
    except Exception as exc:
        # imported here, not above: SQLAlchemy is not loaded before a command that has no use for it
        # runs (``memtui mcp`` answers initialize first; issue 22 item 2)
        from memtui.store.engine import StoreReadOnly

        # StoreReadOnly: a write a command did not expect to be refused (issue 21 item 7);
        # IntegrityKeyError: a keyed store written without its key (issue 21 item 6)
        if not isinstance(exc, (StoreReadOnly, IntegrityKeyError)):
            raise
        print(visible(f"memtui: {exc}"), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

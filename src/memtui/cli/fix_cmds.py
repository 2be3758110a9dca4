"""``memtui fix``: write lint's suggested rewrites back into the memory files (issue 23, item 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memtui.cli.common import _echo, _fail, app
from memtui.text import visible


@app.command()
def fix(
    files: Annotated[list[Path], typer.Argument(help="Memory files to fix (CLAUDE.md, AGENTS.md, rules...).")],
    repo: Annotated[Path, typer.Option("--repo", help="The git checkout the files describe.")] = Path("."),
    check: Annotated[bool, typer.Option("--check", help="Write nothing; exit 1 when there is something to "
                                        "fix (the diff is printed all the same).")] = False,
) -> None:
    """Rewrite in the working tree what `memtui lint --suggest` suggests: moved paths and renamed symbols
    (never a deletion), and print the diff. Nothing is staged or committed. Exit 0 (fixed, or nothing to
    fix), 1 with --check when there is something to fix, 2 on usage errors."""
    from memtui.maintenance.fix import apply_fixes, fix_diff, plan_fixes
    from memtui.maintenance.lint import LintError

    try:
        plan = plan_fixes(list(files), repo)
    except LintError as exc:
        raise _fail(str(exc), 2)
    diff = fix_diff(plan.fixes)
    if diff:
        typer.echo(_shown_diff(diff), nl=False)
    if plan.fixes and not check:
        try:
            apply_fixes(plan)
        except OSError as exc:
            raise _fail(f"cannot write {exc.filename or ''}: {exc.strerror or exc}", 1)
    n, changed = plan.rewrites, len(plan.fixes)
    done = ("would rewrite" if check else "rewrote") if n else "nothing to fix"
    summary = f"memtui fix: {done}" + (f" {n} reference(s) in {changed} file(s)" if n else "")
    if plan.unfixed:
        summary += (f"; {len(plan.unfixed)} stale reference(s) without a fix "
                    "(deleted or not found as written: memtui lint names them)")
    _echo(summary, err=True)
    if check and plan.fixes:
        raise typer.Exit(1)


def _shown_diff(diff: str) -> str:
    """``diff`` with its control characters shown (:func:`memtui.text.visible`), but a line's CRLF ending
    kept as it is: the diff of a CRLF file stays a patch ``git apply`` takes."""
    out = []
    for line in diff.splitlines(keepends=True):
        end = "\r\n" if line.endswith("\r\n") else ("\n" if line.endswith("\n") else "")
        out.append(visible(line[:len(line) - len(end)]) + end)
    return "".join(out)

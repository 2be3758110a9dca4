"""Hand-off to the reviewer's own tools (issue 24, item 7): a piece of evidence opened at its line in
``$VISUAL``/``$EDITOR``, its commit shown by ``git show`` in the pager, a statement edited in the
editor. The TUI suspends around these calls (``App.suspend``); screens call only this module, and
git only through :mod:`memtui.sources`.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import Engine


class HandoffError(Exception):
    """What cannot be handed off, and why (shown to the reviewer)."""


@dataclass(frozen=True)
class EditorTarget:
    """A file to open at ``line`` (1-based). ``temporary``: a read-only copy of the blob at the
    evidence's commit (the file is gone or moved at HEAD), not the checkout's file."""

    path: Path
    line: int
    temporary: bool


def _evidence(engine: Engine, memory_id: str, index: int):
    from memtui.review.evidence import evidence_and_repository

    evidence, repo = evidence_and_repository(engine, memory_id)
    if not evidence:
        raise HandoffError(f"{memory_id} has no evidence")
    e = evidence[index % len(evidence)]
    if not e.path:
        raise HandoffError(f"this {e.type} evidence has no file to open")
    if repo is None or not repo.checkout_path:
        raise HandoffError("the repository has no registered checkout (memtui repo add NAME PATH)")
    return e, Path(repo.checkout_path)


def evidence_file(engine: Engine, memory_id: str, index: int, tmp_dir: Path | None = None) -> EditorTarget:
    """Where the ``index``-th evidence of ``memory_id`` is to be read: the checkout's file at the
    span's line at HEAD when revalidation found it there (or it was not revalidated yet and the file
    is there), else the blob at the evidence's commit written to a read-only file under ``tmp_dir``
    (default: a new temporary folder) at the recorded line. Raises MemoryNotFound (a LookupError), HandoffError."""
    from memtui.sources.gitdiff import GitError, GitRepo

    e, checkout = _evidence(engine, memory_id, index)
    current = checkout / (e.current_path or e.path)
    if e.status not in ("deleted", "unverifiable") and current.is_file() and (
            e.current_line_start is not None or e.status in ("unchecked", "valid")):
        return EditorTarget(current, e.current_line_start or e.line_start or 1, False)
    if not e.commit_sha:
        raise HandoffError(f"{e.path} is not in the checkout and the evidence names no commit")
    try:
        blob = GitRepo(checkout).read_blobs([(e.commit_sha, e.path)]).get((e.commit_sha, e.path))
    except GitError as exc:
        raise HandoffError(str(exc)) from None
    if blob is None:
        raise HandoffError(f"commit {e.commit_sha[:7]} or {e.path} is unknown to the checkout")
    folder = Path(tmp_dir) if tmp_dir else Path(tempfile.mkdtemp(prefix="memtui-evidence-"))
    target = folder / f"{e.commit_sha[:7]}-{Path(e.path).name}"
    if target.exists():
        target.chmod(stat.S_IRUSR | stat.S_IWUSR)
    target.write_bytes(blob.text.encode("utf-8", "surrogateescape"))
    target.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)  # a copy of history: read-only
    return EditorTarget(target, e.line_start or 1, True)


def evidence_commit(engine: Engine, memory_id: str, index: int) -> tuple[Path, str]:
    """The checkout and the commit of the ``index``-th evidence of ``memory_id`` (for ``git show``).
    Raises MemoryNotFound (a LookupError), HandoffError."""
    e, checkout = _evidence(engine, memory_id, index)
    if not e.commit_sha:
        raise HandoffError("this evidence names no commit")
    return checkout, e.commit_sha


def show_commit(checkout: Path, sha: str) -> int:
    """``git show SHA`` on the terminal, in git's pager (:func:`memtui.sources.git.show_commit`);
    the caller has suspended the TUI. Raises HandoffError."""
    from memtui.sources.git import SourceError, show_commit as git_show

    try:
        return git_show(checkout, sha)
    except SourceError as exc:
        raise HandoffError(str(exc)) from None


def editor_command(path: Path, line: int | None = None, env: Mapping[str, str] | None = None) -> list[str]:
    """The command opening ``path`` at ``line`` in ``$VISUAL``, else ``$EDITOR``, else ``vi``:
    ``EDITOR +LINE PATH`` (vi, vim, nano, emacs and most others take ``+LINE``); the editor
    variable is split as a shell would (``code --wait`` works)."""
    env = os.environ if env is None else env
    editor = shlex.split(env.get("VISUAL") or env.get("EDITOR") or "vi")
    return [*editor, *([f"+{line}"] if line else []), str(path)]


def run_editor(path: Path, line: int | None = None) -> int:
    """Run :func:`editor_command` on the terminal and wait for it (the caller has suspended the
    TUI). Returns its exit code. Raises HandoffError when the editor cannot be started."""
    argv = editor_command(path, line)
    try:
        return subprocess.call(argv)
    except OSError as exc:
        raise HandoffError(f"cannot run the editor {argv[0]!r}: {exc.strerror or exc} (set $VISUAL or $EDITOR)") \
            from None


def edit_text(text: str, suffix: str = ".txt") -> str | None:
    """``text`` edited by the reviewer in the editor (a temporary file, removed afterwards); None
    when the editor failed or the result is empty. Raises HandoffError."""
    fd, name = tempfile.mkstemp(prefix="memtui-statement-", suffix=suffix)
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        if run_editor(path) != 0:
            return None
        edited = path.read_text(encoding="utf-8").strip()
        return edited or None
    finally:
        path.unlink(missing_ok=True)

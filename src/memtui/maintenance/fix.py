"""``memtui fix``: write lint's suggestions back into the memory files (issue 23, item 4).

The findings are :func:`memtui.maintenance.lint.lint_files`' own; a fix is what ``memtui lint --suggest``
prints: each moved path (``path_moved``) and renamed symbol (``symbol_renamed``) rewritten in place,
where the line writes it (:func:`memtui.revalidation.references.rewrite_reference` keeps it relative to
the same base). Nothing else changes: a deleted reference is never removed (lint goes on naming it), a
line whose text no longer holds the reference at its column is left alone, line endings and the
other bytes of the file stay as they are. Files are read and written as UTF-8; a file that is not
UTF-8 text is refused as lint's reader refuses it (:class:`~memtui.maintenance.lint.LintError`). Each file is replaced in one step (a temporary file beside it,
then a rename), so a reader never sees half a file.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from memtui.maintenance.lint import Finding, LintError, lint_files
from memtui.revalidation.references import rewrite_reference
from memtui.sources.gitdiff import GitRepo

__all__ = ["FIXABLE", "FileFix", "FixPlan", "plan_fixes", "rewrite_file", "fix_diff", "apply_fixes"]

#: The reason codes a fix rewrites (a moved path, a renamed symbol): never a deletion.
FIXABLE = ("path_moved", "symbol_renamed")


@dataclass(frozen=True)
class FileFix:
    """One memory file's fix: ``file`` relative to the checkout's root, its text before and after, and
    the findings rewritten (in line order)."""

    file: str
    old: str
    new: str
    rewritten: tuple[Finding, ...]


@dataclass
class FixPlan:
    """What ``memtui fix`` would do: ``root`` (the checkout's top folder), the ``fixes`` (files whose text
    changes), and the ``unfixed`` stale findings (deleted, or not found where lint placed them)."""

    root: Path
    fixes: list[FileFix] = field(default_factory=list)
    unfixed: list[Finding] = field(default_factory=list)

    @property
    def rewrites(self) -> int:
        """How many references the fixes rewrite."""
        return sum(len(f.rewritten) for f in self.fixes)


def _fixable(f: Finding) -> bool:
    return f.code in FIXABLE and bool(f.new_path)


def rewrite_file(text: str, findings: list[Finding]) -> tuple[str, list[Finding]]:
    """``text`` with every fixable finding of it rewritten in place, and the findings rewritten.

    Lines are counted as lint counts them (``str.splitlines``); a finding is rewritten only where its
    line holds ``reference`` at ``column`` (right to left on a line, so columns stay valid)."""
    lines = text.splitlines(keepends=True)
    done = []
    for f in sorted((f for f in findings if _fixable(f)), key=lambda f: (f.line, -f.column)):
        if not 0 < f.line <= len(lines):
            continue
        line, i = lines[f.line - 1], f.column - 1
        if i < 0 or line[i:i + len(f.reference)] != f.reference:
            continue
        lines[f.line - 1] = line[:i] + rewrite_reference(f.reference, f.resolved, f.new_path) + line[i + len(f.reference):]
        done.append(f)
    return "".join(lines), sorted(done, key=lambda f: (f.line, f.column))


def plan_fixes(files: list[Path], repo_dir: Path) -> FixPlan:
    """Lint ``files`` (working-tree memory files inside the checkout ``repo_dir``) and plan their fixes;
    writes nothing. Raises :class:`memtui.maintenance.lint.LintError` as lint does, and for a file the
    importer's reader refuses (not UTF-8 text)."""
    from memtui.importers.reader import ImportFileError

    try:
        findings = lint_files(list(files), repo_dir)
    except ImportFileError as exc:  # a file the importer cannot read (not UTF-8, too large): lint's refusal
        raise LintError(str(exc)) from exc
    root = GitRepo(Path(repo_dir).resolve()).toplevel()
    if root is None:  # lint_files has checked it already
        raise LintError(f"{repo_dir}: not a git checkout")
    plan = FixPlan(Path(root))
    by_file: dict[str, list[Finding]] = {}
    for f in findings:
        if f.kind == "stale":
            by_file.setdefault(f.file, []).append(f)
    for rel, items in sorted(by_file.items()):
        try:
            old = (plan.root / rel).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:  # changed since lint read it
            raise LintError(f"{rel}: cannot be read as UTF-8 text ({exc})") from exc
        new, done = rewrite_file(old, items)
        plan.unfixed.extend(f for f in items if f not in done)
        if new != old:
            plan.fixes.append(FileFix(rel, old, new, tuple(done)))
    return plan


def fix_diff(fixes: list[FileFix]) -> str:
    """A unified diff of ``fixes`` (``a/FILE`` / ``b/FILE``, paths relative to the checkout's root) that
    ``git apply`` takes; a last line without a newline is marked as git marks it."""
    out: list[str] = []
    for fx in fixes:
        for line in difflib.unified_diff(fx.old.splitlines(keepends=True), fx.new.splitlines(keepends=True),
                                         f"a/{fx.file}", f"b/{fx.file}"):
            out.append(line)
            if line[:1] in " +-" and not line.startswith(("---", "+++")) and not line.endswith(("\n", "\r")):
                out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def apply_fixes(plan: FixPlan) -> list[Path]:
    """Write each fixed file of ``plan`` in place (a temporary file beside it renamed over it, its mode
    kept); returns the paths written. Raises OSError naming the file when one cannot be written (the
    files before it stay written: each is whole)."""
    written = []
    for fx in plan.fixes:
        path = plan.root / fx.file
        mode = path.stat().st_mode & 0o7777
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".memtui-fix", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(fx.new.encode("utf-8"))
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        written.append(path)
    return written

"""Git access for evidence (gitpython). Nothing above the services layer imports this."""

from __future__ import annotations

from pathlib import Path


class SourceError(Exception):
    """A git operation failed; the message names the repository or file."""


def clone_bundle(bundle: Path | str, dest: Path | str) -> str:
    """Clone the git bundle ``bundle`` into ``dest`` (must not exist, or be empty); return HEAD's sha.

    Raises :class:`SourceError` naming the bundle when it is missing or not a bundle.
    """
    import git

    bundle, dest = Path(bundle), Path(dest)
    if not bundle.is_file():
        raise SourceError(f"{bundle}: no such git bundle")
    try:
        repo = git.Repo.clone_from(str(bundle.resolve()), str(dest), branch="main")
    except git.GitCommandError as exc:
        raise SourceError(f"{bundle}: cannot clone: {exc.stderr.strip() or exc}") from exc
    return repo.head.commit.hexsha


def head_sha(checkout: Path | str) -> str:
    """The sha of HEAD in ``checkout``. Raises SourceError when it is not a git checkout."""
    import git

    try:
        return git.Repo(str(checkout)).head.commit.hexsha
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError) as exc:
        raise SourceError(f"{checkout}: not a git checkout") from exc


def show_commit(checkout: Path | str, sha: str) -> int:
    """Run ``git show SHA`` in ``checkout`` on the terminal, paged by git's own pager (``$GIT_PAGER``,
    ``core.pager``, ``$PAGER``, else ``less``); the caller hands the terminal over first (the TUI
    suspends). Returns git's exit code. Raises :class:`SourceError` when git cannot be run."""
    import subprocess

    if not str(sha).strip() or str(sha).startswith("-"):
        raise SourceError(f"{sha!r}: not a commit")
    try:
        return subprocess.call(["git", "-C", str(checkout), "show", "--end-of-options", sha])
    except OSError as exc:
        raise SourceError(f"{checkout}: cannot run git: {exc}") from exc

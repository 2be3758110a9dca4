"""``memtui fix`` (issue 23, item 4): lint's suggestions written back into the memory files in the working
tree (moved paths, renamed symbols; never a deletion), the diff printed, ``--check`` for CI; and the
issue's acceptance line about a file moved before the memory file was imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.gitrepo import GIT_ENV, git
from tests.test_revalidate_git import Repo

SRC = Path(__file__).resolve().parents[1] / "src"
ENV = {**GIT_ENV, "PYTHONPATH": str(SRC), "MEMTUI_WARM": "0", "LOGNAME": "lee", "USER": "lee"}
AGENTS = "# Billing\n\n- Refunds are issued in `src/billing/refund.py` only.\n- Charges: `src/billing/charge.py`.\n"


def memtui_process(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The command line in a process of its own (the fixed git identity, no warm server)."""
    return subprocess.run([sys.executable, "-m", "memtui", *args], cwd=cwd, capture_output=True, text=True, env=ENV)


def memtui(*args: str, cwd: Path) -> SimpleNamespace:
    """The command line in this process, started in ``cwd`` (the same commands as
    :func:`memtui_process`, without a second of interpreter start each): returncode, stdout, stderr
    and stdout_bytes. A crash is a failure, never an exit code."""
    from typer.testing import CliRunner

    from memtui.cli import app

    before = os.getcwd()
    os.chdir(cwd)
    try:
        res = CliRunner().invoke(app, list(args), env={"LOGNAME": "lee", "USER": "lee"})
    finally:
        os.chdir(before)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return SimpleNamespace(returncode=res.exit_code, stdout=res.stdout, stderr=res.stderr,
                           stdout_bytes=res.stdout_bytes)


@pytest.fixture
def moved_before_import(tmp_path) -> Repo:
    """AGENTS.md names src/billing/refund.py; a later commit moved it to src/payments/refund.py and left
    AGENTS.md as it was."""
    r = Repo(tmp_path / "r")
    r.write("src/billing/refund.py", "def refund():\n    return 1\n")
    r.write("src/billing/charge.py", "def charge():\n    return 2\n")
    r.write("AGENTS.md", AGENTS)
    r.commit("start")
    r.mv("src/billing/refund.py", "src/payments/refund.py")
    r.commit("move refund")
    return r


def test_import_then_maintain_flags_the_line_moved_before_the_import(moved_before_import, tmp_path):
    from memtui.review.service import ReviewService
    from memtui.store.engine import open_store

    r, db = moved_before_import, str(tmp_path / "store.db")
    assert memtui("import", "AGENTS.md", "--repo", ".", "--db", db, cwd=r.path).returncode == 0
    assert memtui("maintain", "--db", db, cwd=r.path).returncode == 0
    engine = open_store(db)
    try:
        svc = ReviewService(engine)
        waiting = [svc.detail(i.memory_id) for i in svc.queue_page(limit=50)]
        refund = [d for d in waiting if "refund.py" in d.statement]
        assert len(refund) == 1
        assert refund[0].revalidation_status == "needs_review"
        assert any("src/billing/refund.py" in why and "src/payments/refund.py" in why
                   for why in refund[0].revalidation_reasons)
    finally:
        engine.dispose()


def test_fix_rewrites_the_moved_line_and_lint_then_passes(moved_before_import):
    r = moved_before_import
    assert memtui_process("lint", "AGENTS.md", "--repo", ".", cwd=r.path).returncode == 1
    out = memtui_process("fix", "AGENTS.md", "--repo", ".", cwd=r.path)
    assert out.returncode == 0, out.stderr
    fixed = AGENTS.replace("`src/billing/refund.py`", "`src/payments/refund.py`")
    assert r.read("AGENTS.md") == fixed
    assert out.stdout == ("--- a/AGENTS.md\n+++ b/AGENTS.md\n@@ -1,4 +1,4 @@\n # Billing\n \n"
                          "-- Refunds are issued in `src/billing/refund.py` only.\n"
                          "+- Refunds are issued in `src/payments/refund.py` only.\n"
                          " - Charges: `src/billing/charge.py`.\n")
    assert out.stderr.strip() == "memtui fix: rewrote 1 reference(s) in 1 file(s)"
    assert git(r.path, "diff", "--name-only").split() == ["AGENTS.md"]  # in the working tree only
    assert git(r.path, "diff", "--cached", "--name-only") == ""  # nothing staged
    lint = memtui_process("lint", "AGENTS.md", "--repo", ".", cwd=r.path)
    assert (lint.returncode, lint.stdout) == (0, ""), lint.stdout
    again = memtui("fix", "AGENTS.md", "--repo", ".", cwd=r.path)
    assert (again.returncode, again.stdout, again.stderr.strip()) == (0, "", "memtui fix: nothing to fix")


def test_check_writes_nothing_and_exits_1(moved_before_import):
    r = moved_before_import
    before = (r.path / "AGENTS.md").read_bytes()
    out = memtui("fix", "AGENTS.md", "--repo", ".", "--check", cwd=r.path)
    assert out.returncode == 1
    assert (r.path / "AGENTS.md").read_bytes() == before
    assert "+- Refunds are issued in `src/payments/refund.py` only.\n" in out.stdout
    assert out.stderr.strip() == "memtui fix: would rewrite 1 reference(s) in 1 file(s)"
    # the printed diff is the fix: git apply takes it
    (r.path.parent / "fix.diff").write_text(out.stdout)
    git(r.path, "apply", str(r.path.parent / "fix.diff"))
    assert memtui("fix", "AGENTS.md", "--repo", ".", "--check", cwd=r.path).returncode == 0


def test_a_deleted_reference_is_never_removed_and_a_renamed_symbol_is_rewritten(tmp_path):
    from tests.test_references import CLIENTS_NEW, CLIENTS_OLD

    r = Repo(tmp_path / "r")
    r.write("src/clients.py", CLIENTS_OLD)
    r.write("src/old.py", "x = 1\n")
    text = "# Notes\n\n- Requests go through `ClaudeClient`.\n- Old helpers: `src/old.py`.\n"
    r.write("AGENTS.md", text)
    r.commit("start")
    r.write("src/clients.py", CLIENTS_NEW)
    r.rm("src/old.py")
    r.commit("rename and delete")
    out = memtui("fix", "AGENTS.md", "--repo", ".", cwd=r.path)
    assert out.returncode == 0, out.stderr
    assert r.read("AGENTS.md") == text.replace("`ClaudeClient`", "`ClaudeProvider`")  # src/old.py stays
    assert out.stderr.strip() == ("memtui fix: rewrote 1 reference(s) in 1 file(s); 1 stale reference(s) without "
                                  "a fix (deleted or not found as written: memtui lint names them)")
    lint = memtui("lint", "AGENTS.md", "--repo", ".", cwd=r.path)
    assert lint.returncode == 1 and lint.stdout.startswith("AGENTS.md:4:")  # the deletion is lint's to report


def test_line_endings_a_missing_last_newline_and_other_files_are_kept(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/a.py", "A = 1\n")
    r.write("src/b.py", "B = 1\n")
    crlf = "# Notes\r\n\r\n- See `src/a.py`.\r\n- Untouched line.\r\n"
    (r.path / "AGENTS.md").write_bytes(crlf.encode())
    (r.path / "CLAUDE.md").write_bytes("# Notes\n\n- See `src/b.py` (last line, no newline)".encode())
    (r.path / "CLAUDE.md").chmod(0o640)
    r.commit("start")
    r.mv("src/a.py", "lib/a.py")
    r.mv("src/b.py", "lib/b.py")
    r.commit("move")
    check = memtui("fix", "AGENTS.md", "CLAUDE.md", "--check", cwd=r.path)
    assert check.returncode == 1
    printed = check.stdout_bytes  # bytes: the CRLF endings as printed
    assert b"-- See `src/a.py`.\r\n+- See `lib/a.py`.\r\n" in printed
    assert printed.endswith(b"+- See `lib/b.py` (last line, no newline)\n\\ No newline at end of file\n")
    (r.path.parent / "fix.diff").write_bytes(printed)
    git(r.path, "apply", "--check", str(r.path.parent / "fix.diff"))  # a patch git takes as it is
    out = memtui("fix", "AGENTS.md", "CLAUDE.md", "--repo", ".", cwd=r.path)
    assert out.returncode == 0, out.stderr
    assert (r.path / "AGENTS.md").read_bytes() == crlf.replace("src/a.py", "lib/a.py").encode()
    assert (r.path / "CLAUDE.md").read_bytes() == b"# Notes\n\n- See `lib/b.py` (last line, no newline)"
    assert (r.path / "CLAUDE.md").stat().st_mode & 0o777 == 0o640
    assert not [p for p in r.path.rglob("*memtui-fix*")]  # no temporary file left beside them


def test_a_file_that_is_not_utf8_is_refused_not_rewritten(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/a.py", "A = 1\n")
    raw = b"# Notes \xe9t\xe9\n\n- See `src/a.py`.\n"
    (r.path / "AGENTS.md").write_bytes(raw)
    r.commit("start")
    r.mv("src/a.py", "lib/a.py")
    r.commit("move")
    out = memtui("fix", "AGENTS.md", "--repo", ".", cwd=r.path)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.startswith("memtui: ") and "AGENTS.md: line 1: not UTF-8 text" in out.stderr
    assert (r.path / "AGENTS.md").read_bytes() == raw


def test_usage_errors(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "AGENTS.md").write_text("- `x.py`\n")
    out = memtui("fix", "AGENTS.md", "--repo", ".", cwd=plain)
    assert out.returncode == 2 and "not a git checkout" in out.stderr
    r = Repo(tmp_path / "r")
    r.write("AGENTS.md", "- `x.py`\n")
    r.commit("start")
    missing = memtui("fix", "NOPE.md", "--repo", ".", cwd=r.path)
    assert missing.returncode == 2 and "NOPE.md: no such file" in missing.stderr
    assert os.listdir(plain) == ["AGENTS.md"]

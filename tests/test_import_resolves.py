"""Import resolves a memory file's references with history, as lint does (issue 23, item 1).

Real git repositories in tmp dirs, the real command line (in this process), a real SQLite store; the
expected commits and paths are read from the repository the test built."""

from __future__ import annotations

import sqlite3

from tests.test_fix import memtui
from tests.test_revalidate_git import Repo


def _evidence(db: str, written: str) -> tuple:
    """(status, reason_code, status_reason, commit_sha) of the mention evidence naming ``written``."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT status, reason_code, status_reason, commit_sha FROM evidence "
                           "WHERE ref = 'mention' AND (target = ? OR path = ?)", (written, written)).fetchall()
    finally:
        con.close()
    assert len(rows) == 1, rows
    return rows[0]


def _state(db: str, written: str) -> str:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT m.state FROM memory m JOIN evidence e ON e.memory_id = m.memory_id "
                           "WHERE e.ref = 'mention' AND e.target = ?", (written,)).fetchone()[0]
    finally:
        con.close()


def _import_and_maintain(r: Repo, db: str) -> None:
    assert memtui("import", "AGENTS.md", "--repo", ".", "--db", db, cwd=r.path).returncode == 0
    assert memtui("maintain", "--only", "revalidate", "--db", db, cwd=r.path).returncode == 0


def test_a_file_deleted_before_the_import_is_flagged_with_the_deleting_commit(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/legacy.py", "x = 1\n")
    r.write("src/keep.py", "y = 2\n")
    r.write("AGENTS.md", "# Notes\n\n- Old code lives in `src/legacy.py`.\n- Kept: `src/keep.py`.\n")
    written = r.commit("start")
    r.rm("src/legacy.py")
    gone = r.commit("drop legacy")
    db = str(tmp_path / "s.db")
    _import_and_maintain(r, db)
    status, code, why, anchor = _evidence(db, "src/legacy.py")
    assert (status, code, anchor) == ("deleted", "file_deleted", written)  # anchored where the line was written
    assert why == f"src/legacy.py was deleted in {gone[:7]}"
    assert _state(db, "src/legacy.py") == "needs_review"
    assert _evidence(db, "src/keep.py")[:2] == ("valid", "exists")
    assert _state(db, "src/keep.py") == "candidate"


def test_a_name_that_never_existed_stays_a_note_and_is_retried_until_it_appears_then_its_deletion_is_stale(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/app.py", "x = 1\n")
    r.write("AGENTS.md", "# Notes\n\n- Plugins go in `src/plugins/loader.py`.\n")
    r.commit("start")
    db = str(tmp_path / "s.db")
    _import_and_maintain(r, db)
    status, code, _why, first_anchor = _evidence(db, "src/plugins/loader.py")
    assert (status, code) == ("unresolvable", "reference_unresolvable")
    assert _state(db, "src/plugins/loader.py") == "candidate"  # a low note, not a review
    r.write("src/plugins/loader.py", "def load():\n    pass\n")
    appeared = r.commit("add the loader")
    assert memtui("maintain", "--only", "revalidate", "--db", db, cwd=r.path).returncode == 0
    status, code, _why, anchor = _evidence(db, "src/plugins/loader.py")
    assert (status, code, anchor) == ("valid", "exists", appeared)  # re-tried, then anchored where it exists
    assert anchor != first_anchor
    r.rm("src/plugins/loader.py")
    gone = r.commit("drop the loader")
    assert memtui("maintain", "--only", "revalidate", "--db", db, cwd=r.path).returncode == 0
    status, code, why, _anchor = _evidence(db, "src/plugins/loader.py")
    assert (status, code, why) == ("deleted", "file_deleted", f"src/plugins/loader.py was deleted in {gone[:7]}")
    assert _state(db, "src/plugins/loader.py") == "needs_review"


def test_a_reference_valid_at_import_keeps_its_head_anchor(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/a.py", "x = 1\n")
    r.write("AGENTS.md", "# Notes\n\n- Entry: `src/a.py`.\n")
    r.commit("start")
    r.write("src/b.py", "y = 1\n")
    head = r.commit("more")
    db = str(tmp_path / "s.db")
    _import_and_maintain(r, db)
    assert _evidence(db, "src/a.py") == ("valid", "exists", "src/a.py exists at HEAD", head)


def test_the_import_flags_a_reference_already_stale_at_once(tmp_path):
    """No maintenance run: the import itself sends the memory to review, naming the commit and the new path."""
    r = Repo(tmp_path / "r")
    r.write("src/billing/refund.py", "def refund():\n    return 1\n")
    r.write("AGENTS.md", "# Billing\n\n- Refunds: `src/billing/refund.py`.\n")
    r.commit("start")
    r.mv("src/billing/refund.py", "src/payments/refund.py")
    moved = r.commit("move refund")
    db = str(tmp_path / "s.db")
    assert memtui("import", "AGENTS.md", "--repo", ".", "--db", db, cwd=r.path).returncode == 0
    status, code, why, _anchor = _evidence(db, "src/billing/refund.py")
    assert (status, code) == ("changed", "path_moved")
    assert why == f"src/billing/refund.py was moved to src/payments/refund.py in {moved[:7]}"
    assert _state(db, "src/billing/refund.py") == "needs_review"

"""``memtui lint`` kept between runs (issue 22, item 3): the findings by HEAD and the files' contents,
each parse by commit and contents, symbol definitions by commit and name — under the repository's git
dir, never in the working tree; and the history read once for many paths (``path_fates``).

Expected commits and paths come from the test's own git commands, never from the code under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.maintenance.lint import lint_files
from memtui.sources.diskcache import DiskCache, for_checkout
from memtui.sources.gitdiff import GitRepo
from memtui.sources.history import History, path_fates
from memtui.sources.symbol_index import RepoSymbolIndex, SymbolIndex
from memtui.sources.symbol_store import SymbolStore, using
from tests.gitrepo import GIT_ENV, git
from tests.test_revalidate_git import Repo


@pytest.fixture(autouse=True)
def _cache_on(monkeypatch):
    monkeypatch.delenv("MEMTUI_CACHE", raising=False)
    monkeypatch.delenv("MEMTUI_CACHE_DIR", raising=False)


def _moved(tmp_path):
    """AGENTS.md names refund.py (moved later), charge.py and the class Charger (charge.py)."""
    r = Repo(tmp_path / "r")
    r.write("src/billing/refund.py", "def refund():\n    return 1\n")
    r.write("src/billing/charge.py", "class Charger:\n    pass\n")
    r.write("AGENTS.md", "# Billing\n\n- Refunds: `src/billing/refund.py`.\n"
                         "- Charges: `src/billing/charge.py` holds `Charger`.\n")
    r.commit("start")
    r.mv("src/billing/refund.py", "src/payments/refund.py")
    move = r.commit("move refund")
    return r, move


def _lint(r, **kw):
    stats: dict = {}
    found = lint_files([r.path / "AGENTS.md"], r.path, stats=stats, **kw)
    return [(f.file, f.line, f.column, f.kind, f.code, f.message) for f in found], stats


def _cache_files(r) -> list[Path]:
    return sorted(p for p in (r.path / ".git" / "memtui").rglob("*") if p.is_file())


def test_a_second_run_on_the_same_head_reads_the_kept_findings(tmp_path):
    r, move = _moved(tmp_path)
    expected = [("AGENTS.md", 3, 13, "stale", "path_moved",
                 f"src/billing/refund.py was moved to src/payments/refund.py in {move[:7]}")]
    first, stats = _lint(r)
    assert first == expected
    assert stats["cached"] and not stats["from_cache"] and stats["parses"] == 2  # HEAD and the line's commit
    again, stats = _lint(r)
    assert again == expected and stats["from_cache"] and stats["parses"] == 0
    assert _lint(r, cache=False)[0] == expected
    # kept under .git, nothing in the working tree
    assert _cache_files(r) and all(".git" in p.relative_to(r.path).parts for p in _cache_files(r))
    assert git(r.path, "status", "--porcelain", "--ignored") == ""


def test_a_new_commit_is_linted_again_and_reuses_the_older_commits_parse(tmp_path):
    r, move = _moved(tmp_path)
    _lint(r)
    r.rm("src/billing/charge.py")
    gone = r.commit("delete charge")
    found, stats = _lint(r)
    assert not stats["from_cache"]
    assert stats["parses"] == 1  # HEAD only: the line's commit was parsed by the first run
    assert ("AGENTS.md", 4, 13, "stale", "file_deleted", f"src/billing/charge.py was deleted in {gone[:7]}") in found
    assert found == _lint(r, cache=False)[0]


def test_an_edit_of_the_file_is_linted_again(tmp_path):
    r, move = _moved(tmp_path)
    _lint(r)
    r.write("AGENTS.md", r.read("AGENTS.md") + "- Notes: `src/billing/notes.py`.\n")  # not committed
    found, stats = _lint(r)
    assert not stats["from_cache"] and stats["parses"] == 2
    assert ("AGENTS.md", 5, 11, "unresolvable", "reference_unresolvable") in [f[:5] for f in found]
    assert found == _lint(r, cache=False)[0]
    r.commit("a line more")
    found, stats = _lint(r)
    assert not stats["from_cache"] and found == _lint(r, cache=False)[0]


def test_symbol_definitions_are_looked_up_once_per_commit(tmp_path):
    r, move = _moved(tmp_path)
    _, stats = _lint(r)
    assert stats["symbol_lookups"] >= 1  # Charger, at HEAD and at the line's commit
    r.write("AGENTS.md", r.read("AGENTS.md") + "\nCharges go through `Charger`.\n")
    _, stats = _lint(r)
    assert stats["parses"] == 2 and stats["symbol_lookups"] == 0  # same names, same commits: all kept


def test_the_symbol_store_answers_another_process_without_git(tmp_path):
    r, _ = _moved(tmp_path)
    head = git(r.path, "rev-parse", "HEAD").strip()
    cache = DiskCache(tmp_path / "cache")
    repo = GitRepo(r.path)
    with using(SymbolStore(cache)):
        first = RepoSymbolIndex(repo, head, SymbolIndex()).definitions(["Charger", "Nowhere"])
    assert [(d.name, d.path, d.start_line) for d in first["Charger"]] == [("Charger", "src/billing/charge.py", 1)]
    assert first["Nowhere"] == []
    before = repo.git_processes
    with using(SymbolStore(cache)):  # a new store over the same folder: what a later process sees
        again = RepoSymbolIndex(repo, head, SymbolIndex()).definitions(["Charger", "Nowhere"])
    assert again == first and repo.git_processes == before
    # a short revision is never answered from the store (it may name another commit later)
    with using(SymbolStore(cache)) as store:
        RepoSymbolIndex(repo, head[:10], SymbolIndex()).definitions(["Charger"])
    assert store.hits == 0


def test_at_a_new_commit_only_the_changed_files_are_parsed(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("a.py", "class Charger:\n    pass\n")
    r.write("b.py", "from a import Charger\n\nx = Charger()\n")
    r.write("c.py", "from a import Charger\n\ndef use():\n    return Charger()\n")
    first = r.commit("start")
    cache, repo = DiskCache(tmp_path / "cache"), GitRepo(r.path)
    index = SymbolIndex()
    with using(SymbolStore(cache)):
        RepoSymbolIndex(repo, first, index).definitions(["Charger"])
    assert index.parses == 3  # every file naming Charger
    r.write("b.py", "from a import Charger\n\n\nclass Charger2(Charger):\n    pass\n")
    second = r.commit("b changes")
    index = SymbolIndex()
    with using(SymbolStore(cache)):  # a later process
        found = RepoSymbolIndex(repo, second, index).definitions(["Charger", "Charger2"])
    assert index.parses == 1  # b.py: a.py and c.py are the same blobs as before
    assert found == RepoSymbolIndex(repo, second, SymbolIndex()).definitions(["Charger", "Charger2"])
    assert [(d.path, d.start_line) for d in found["Charger2"]] == [("b.py", 4)]


def test_no_cache_when_switched_off_moved_or_for_a_shallow_clone(tmp_path, monkeypatch):
    r, _ = _moved(tmp_path)
    monkeypatch.setenv("MEMTUI_CACHE", "off")
    _, stats = _lint(r)
    assert not stats["cached"] and not (r.path / ".git" / "memtui").exists()
    monkeypatch.setenv("MEMTUI_CACHE", "1")
    monkeypatch.setenv("MEMTUI_CACHE_DIR", str(tmp_path / "elsewhere"))
    _, stats = _lint(r)
    assert stats["cached"] and any((tmp_path / "elsewhere").rglob("*.json.z"))
    assert not (r.path / ".git" / "memtui").exists()
    monkeypatch.delenv("MEMTUI_CACHE_DIR")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{r.path}", str(shallow))
    assert for_checkout(GitRepo(shallow)) is None


def test_a_damaged_entry_is_a_miss(tmp_path):
    r, move = _moved(tmp_path)
    expected, _ = _lint(r)
    for p in _cache_files(r):
        p.write_bytes(b"not what was written")
    found, stats = _lint(r)
    assert found == expected and not stats["from_cache"] and stats["parses"] == 2


def test_a_file_an_import_follows_is_linted_with_it(tmp_path):
    """CLAUDE.md reading @AGENTS.md: the findings of AGENTS.md's lines name AGENTS.md (was a KeyError)."""
    r, move = _moved(tmp_path)
    r.write("CLAUDE.md", "Agent rules: read @AGENTS.md\n")
    r.commit("claude")
    found = lint_files([r.path / "CLAUDE.md"], r.path)
    assert [(f.file, f.line, f.code, f.new_path) for f in found] == [
        ("AGENTS.md", 3, "path_moved", "src/payments/refund.py")]
    out = subprocess.run([sys.executable, "-m", "memtui", "lint", "CLAUDE.md", "--format", "json"], cwd=r.path,
                         capture_output=True, text=True,
                         env={**GIT_ENV, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")})
    assert out.returncode == 1, out.stderr
    assert json.loads(out.stdout)["findings"][0]["file"] == "AGENTS.md"


def test_path_fates_follows_many_paths_in_one_pass(tmp_path):
    r = Repo(tmp_path / "r")
    for name in ("a", "b", "c", "d", "e"):
        r.write(f"{name}.txt", f"{name} " * 40 + "\n")
    since = r.commit("start")
    r.mv("a.txt", "x/a.txt")
    first = r.commit("a to x/")
    r.mv("x/a.txt", "y/a2.txt")
    r.rm("b.txt")
    second = r.commit("a again, b deleted")
    r.mv("c.txt", "c2.txt")
    r.mv("d.txt", "d2.txt")
    third = r.commit("c and d renamed")
    r.write("b.txt", "b again\n")  # a new file under a deleted name is not the old one
    r.mv("c2.txt", "c3.txt")
    fourth = r.commit("b again, c once more")
    fates = path_fates(r.path, since, ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "nothing.txt"])
    assert {p: t.path for p, t in fates.items()} == {"a.txt": "y/a2.txt", "b.txt": None, "c.txt": "c3.txt",
                                                     "d.txt": "d2.txt", "e.txt": "e.txt", "nothing.txt": "nothing.txt"}
    assert [(s.commit, s.kind, s.new_path) for s in fates["a.txt"].steps] == [(first, "R", "x/a.txt"),
                                                                              (second, "R", "y/a2.txt")]
    assert [(s.commit, s.kind) for s in fates["b.txt"].steps] == [(second, "D")]
    assert [s.commit for s in fates["c.txt"].steps] == [third, fourth]
    assert fates["d.txt"].last_commit == third and fates["e.txt"].steps == ()
    # from a later commit, only what came after it
    later = path_fates(r.path, first, ["x/a.txt", "a.txt"])
    assert later["x/a.txt"].path == "y/a2.txt" and later["a.txt"].steps == ()
    # the same as following each path alone
    repo = GitRepo(r.path)
    history = History(repo, repo.head())
    assert all(history.follow(since, p) == t for p, t in fates.items())


def test_the_cache_keeps_the_newest_entries_of_a_kind(tmp_path):
    cache = DiskCache(tmp_path / "c")
    cache.max_entries = 3
    for i in range(5):
        assert cache.put("k", f"key{i}", {"i": i})
    assert [cache.get("k", f"key{i}") for i in range(5)] == [None, None, {"i": 2}, {"i": 3}, {"i": 4}]
    assert cache.get("other", "key4") is None

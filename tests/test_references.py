"""Named references (issue 8): existence and location, moves through history, unresolvable,
error isolation, approval re-anchoring and ``memtui lint`` — on real git repositories built here.

Expected commits and paths come from the test's own git commands, never from the code under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from memtui.domain.invariants import Actor
from memtui.revalidation.engine import EvidenceRef, revalidate
from memtui.maintenance.runner import maintain
from memtui.review.service import ReviewService
from memtui.sample import set_up_demo
from memtui.sources.gitdiff import GitRepo
from tests.gitrepo import GIT_ENV, git
from tests.test_revalidate_git import Repo

NOW = datetime(2026, 12, 1, tzinfo=UTC)
LEAD = Actor("human", "lee", "lead")


def mention(eid, path, commit, *, typ="file_span", target=None, symbol=None, mid="m1"):
    return EvidenceRef(eid, mid, typ, path, commit, None, None, symbol, target or path, None, "mention")


def check_of(repo: Repo, refs):
    result = revalidate(refs, None, GitRepo(repo.path))
    return {c.evidence_id: c for c in result.checks}, {v.memory_id: v for v in result.verdicts}


@pytest.fixture
def moved_repo(tmp_path):
    """src/billing/{refund,charge,notes}.py and docs/guide.md; then: refund.py moved (git mv),
    docs/guide.md edited, notes.py deleted, and old/ folder moved to legacy/."""
    r = Repo(tmp_path / "r")
    r.write("src/billing/refund.py", "def refund():\n    return 1\n")
    r.write("src/billing/charge.py", "def charge():\n    return 2\n")
    r.write("src/billing/notes.py", "NOTES = 1\n")
    r.write("docs/guide.md", "# Guide\n")
    r.write("old/a.txt", "a\n")
    r.write("old/b.txt", "b\n")
    anchor = r.commit("start")
    r.mv("src/billing/refund.py", "src/payments/refund.py")
    move = r.commit("move refund")
    r.write("docs/guide.md", "# Guide\n\nMore words.\n")
    r.rm("src/billing/notes.py")
    delete = r.commit("edit guide, delete notes")
    r.mv("old/a.txt", "legacy/a.txt")
    r.mv("old/b.txt", "legacy/b.txt")
    folder = r.commit("move folder")
    return r, anchor, move, delete, folder


def test_named_file_moved_deleted_edited_and_never_existed(moved_repo):
    r, anchor, move, delete, folder = moved_repo
    checks, verdicts = check_of(r, [
        mention(1, "src/billing/refund.py", anchor),
        mention(2, "src/billing/charge.py", anchor),
        mention(3, "docs/guide.md", anchor),
        mention(4, "src/billing/notes.py", anchor),
        mention(5, "src/billing/planned.py", anchor, mid="m2"),
        mention(6, "old", anchor, typ="folder", target="old/"),
    ])
    assert (checks[1].status, checks[1].reason_code, checks[1].current_path) == ("changed", "path_moved",
                                                                                 "src/payments/refund.py")
    assert checks[1].moved_in == move and move[:7] in checks[1].reason
    assert (checks[2].status, checks[2].reason_code) == ("valid", "exists")
    # a file the line merely names is not "changed" because it was edited
    assert (checks[3].status, checks[3].reason_code) == ("valid", "exists")
    # the reason names the commit that deleted it, not the anchor
    assert (checks[4].status, checks[4].reason_code, checks[4].moved_in) == ("deleted", "file_deleted", delete)
    assert delete[:7] in checks[4].reason and anchor[:7] not in checks[4].reason
    assert (checks[5].status, checks[5].severity) == ("unresolvable", "low")
    assert (checks[6].status, checks[6].current_path, checks[6].moved_in) == ("changed", "legacy", folder)
    assert verdicts["m1"].outcome == "needs_review"
    # a memory whose only finding is a reference that never existed is kept, with a low note
    assert (verdicts["m2"].outcome, verdicts["m2"].severity) == ("keep", "low")
    assert verdicts["m2"].reasons == [checks[5].reason]


def test_restructuring_chains_and_same_name_fallback(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("a/x.py", "".join(f"line {i}\n" for i in range(40)))
    r.write("a/y.py", "".join(f"other {i}\n" for i in range(40)))
    anchor = r.commit("start")
    r.mv("a/x.py", "b/x.py")
    r.commit("first move")
    r.mv("b/x.py", "c/x2.py")
    second = r.commit("second move")
    # y.py: deleted and re-added elsewhere with different content (no rename git can see)
    r.rm("a/y.py")
    gone = r.commit("delete y")
    r.write("pkg/core/y.py", "completely new\n")
    r.commit("add new y")
    checks, _ = check_of(r, [mention(1, "a/x.py", anchor), mention(2, "a/y.py", anchor)])
    assert (checks[1].current_path, checks[1].moved_in) == ("c/x2.py", second)
    assert (checks[2].status, checks[2].current_path) == ("changed", "pkg/core/y.py")
    assert gone[:7] in checks[2].reason


def test_renamed_with_unchanged_content_is_not_valid(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/router.ts", "export const x = 1;\n")
    anchor = r.commit("start")
    r.mv("src/router.ts", "packages/api/src/router.ts")
    r.commit("move")
    checks, verdicts = check_of(r, [mention(1, "src/router.ts", anchor)])
    assert checks[1].status == "changed" and checks[1].current_path == "packages/api/src/router.ts"
    assert verdicts["m1"].outcome == "needs_review"


def test_globs_and_examples(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("pkg/a/__snapshots__/one.snap", "s\n")
    r.write("tests/t.py", "t\n")
    anchor = r.commit("start")
    r.rm("tests/t.py")
    r.commit("drop tests")
    example = EvidenceRef(4, "m1", "file_span", "my_handler.py", None, None, None, None, "my_handler.py", None, "example")
    checks, verdicts = check_of(r, [
        mention(1, "pkg/**/*.snap", anchor, typ="glob"),
        mention(2, "tests/*.py", anchor, typ="glob"),
        mention(3, "src/**/*.rs", anchor, typ="glob", mid="m3"),
        example,
    ])
    assert checks[1].status == "valid"
    assert (checks[2].status, checks[2].reason_code) == ("deleted", "glob_unmatched")
    assert checks[3].status == "unresolvable"
    assert (checks[4].status, checks[4].reason_code) == ("unchecked", "example")


def test_bad_paths_and_missing_objects_are_isolated(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("big.bin", "x" * 5000 + "\n")
    r.write("ok.py", "a\nb\nc\n")
    anchor = r.commit("start")
    r.write("big.bin", "y" * 5000 + "\n")
    r.write("ok.py", "a\nb\nc\nd\n")
    r.commit("change")
    # the clone lacks one object, as a partial clone does: the old big.bin blob
    oid = git(r.path, "rev-parse", f"{anchor}:big.bin").strip()
    (r.path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    refs = [EvidenceRef(1, "m1", "file_span", "../../etc/passwd", anchor, 1, 2, None, None, None, None),
            EvidenceRef(2, "m2", "file_span", "/etc/passwd", anchor, 1, 1, None, None, None, None),
            EvidenceRef(3, "m3", "file_span", "big.bin", anchor, 1, 1, None, None, None, None),
            EvidenceRef(4, "m4", "file_span", "ok.py", anchor, 1, 2, None, None, None, None)]
    checks, verdicts = check_of(r, refs)
    assert (checks[1].status, checks[1].reason_code) == ("unverifiable", "bad_path")
    assert (checks[2].status, checks[2].reason_code) == ("unverifiable", "bad_path")
    assert checks[3].status == "unverifiable"
    assert (checks[4].status, checks[4].reason_code, checks[4].current_line_start) == ("valid", "unchanged", 1)
    assert verdicts["m4"].outcome == "keep"


def test_maintain_revalidates_the_rest_beside_bad_evidence(engine, tmp_path):
    setup = set_up_demo(engine, tmp_path / "work", LEAD)
    head = git(setup.checkout, "rev-parse", "HEAD").strip()
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"memories": [{
        "memoryId": "mem_bad_path", "type": "code_fact", "statement": "The passwd file holds users.",
        "scope": {"tenantId": "acme", "repositoryId": "order-service"},
        "evidence": [{"type": "file_span", "path": "../../etc/passwd", "commitSha": head, "lines": [1, 2]}]}]}))
    from memtui.importers.formats import import_paths

    import_paths(engine, [bad], LEAD)
    results = maintain(engine, now=NOW, only=["revalidate"])
    (rev,) = [r for r in results if r.job_type == "revalidate"]
    assert "skipped" not in rev.summary
    assert rev.summary["unverifiable"] == 1
    assert rev.summary["couldNotCheck"][0].startswith("mem_bad_path: ")
    svc = ReviewService(engine)
    # the others were revalidated as before (the seed exercise's outcomes)
    assert svc.detail("mem_old_rule_engine").state == "invalidated"
    assert svc.detail("mem_rule_registry_convention").state == "needs_review"


def test_approval_reanchors_and_sticks(engine, tmp_path):
    setup = set_up_demo(engine, tmp_path / "work", LEAD)
    maintain(engine, now=NOW)
    svc = ReviewService(engine)
    mid = "mem_rule_registry_convention"
    assert svc.detail(mid).state == "needs_review"
    before = {(e.path, e.line_start, e.line_end, e.commit_sha) for e in svc.detail(mid).evidence}
    from memtui.review.proposals import ProposalQueries
    from memtui.review.resolve import ResolveService

    # the exercise's conflict with mem_direct_validator_rules is resolved first (keep this memory)
    for c in ProposalQueries(engine).conflicts():
        if mid in (c.a.memory_id, c.b.memory_id):
            ResolveService(engine).resolve_conflict(c.conflict_id, "keep_a" if c.a.memory_id == mid else "keep_b", LEAD)
    svc.decide(mid, "approve", LEAD, comment="read the evidence side by side")
    head = git(setup.checkout, "rev-parse", "HEAD").strip()
    after = svc.detail(mid).evidence
    assert {e.commit_sha for e in after if e.commit_sha} == {head}
    # the span is anchored where it is at HEAD: its recorded text is HEAD's text there
    span = next(e for e in after if e.type == "file_span")
    head_text = git(setup.checkout, "show", f"HEAD:{span.path}").splitlines(keepends=True)
    import hashlib
    assert span.span_hash in (None, "sha256:" + hashlib.sha256(
        "".join(head_text[span.line_start - 1:span.line_end]).encode()).hexdigest())
    # the original anchors stay in the history
    approval = svc.history(mid)[-1]
    assert approval.to_state == "active" and "re-anchored at HEAD" in approval.reason
    for path, start, end, commit in before:
        if commit:
            assert f"@{commit[:7]}" in approval.reason
    # the next maintenance run leaves it active, and the one after changes nothing
    maintain(engine, now=NOW)
    assert svc.detail(mid).state == "active"
    again = maintain(engine, now=NOW, only=["revalidate"])
    assert all(r.updated == 0 for r in again)


def _memtui(*args, cwd):
    return subprocess.run([sys.executable, "-m", "memtui", *args], cwd=cwd, capture_output=True, text=True,
                          env={**GIT_ENV, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")})


def test_lint_names_the_moved_line_and_suggests_the_fix(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/billing/refund.py", "def refund():\n    return 1\n")
    r.write("src/billing/charge.py", "def charge():\n    return 2\n")
    r.write("AGENTS.md", "# Billing\n\n- Refunds: `src/billing/refund.py`.\n- Charges: `src/billing/charge.py`.\n")
    r.commit("start")
    r.mv("src/billing/refund.py", "src/payments/refund.py")
    move = r.commit("move refund")
    out = _memtui("lint", "AGENTS.md", "--repo", ".", cwd=r.path)
    assert out.returncode == 1, out.stderr
    assert out.stdout.strip() == (f"AGENTS.md:3:13: stale: src/billing/refund.py was moved to "
                                  f"src/payments/refund.py in {move[:7]}")
    assert "charge.py" not in out.stdout
    gh = _memtui("lint", "AGENTS.md", "--repo", ".", "--format", "github", cwd=r.path)
    assert gh.stdout.startswith("::error file=AGENTS.md,line=3,col=13::stale: ")
    js = json.loads(_memtui("lint", "AGENTS.md", "--format", "json", cwd=r.path).stdout)
    assert js["stale"] == 1 and js["findings"][0]["new_path"] == "src/payments/refund.py"
    diff = _memtui("lint", "AGENTS.md", "--repo", ".", "--suggest", cwd=r.path).stdout
    assert diff.startswith("--- a/AGENTS.md")  # the diff alone on stdout: it pipes into git apply
    (tmp_path / "fix.diff").write_text(diff)
    subprocess.run(["git", "apply", str(tmp_path / "fix.diff")], cwd=r.path, check=True, env=GIT_ENV)
    assert "`src/payments/refund.py`" in r.read("AGENTS.md")
    r.commit("fix the memory file")
    clean = _memtui("lint", "AGENTS.md", "--repo", ".", cwd=r.path)
    assert (clean.returncode, clean.stdout) == (0, "")
    assert clean.stderr.strip() == "memtui lint: 1 file(s), 0 stale, 0 other finding(s)"


def test_lint_usage_errors(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "AGENTS.md").write_text("- `x.py`\n")
    out = _memtui("lint", "AGENTS.md", "--repo", ".", cwd=plain)
    assert out.returncode == 2 and "not a git checkout" in out.stderr
    bad = _memtui("lint", "AGENTS.md", "--format", "xml", cwd=plain)
    assert bad.returncode == 2


def test_symbols_exist_move_and_disappear(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("app/router.py", "class Router:\n    def route(self):\n        return 1\n\n    def old(self):\n        return 2\n")
    r.write("app/util.go", "package app\n\nfunc Helper() int { return 1 }\n")
    r.write("docs/MIGRATION.md", "Router.gone was renamed; `Router.gone` -> `Router.route`\n")
    anchor = r.commit("start")
    # Helper moves to another file; Router.old is deleted (its name survives only in docs)
    r.rm("app/util.go")
    r.write("pkg/helpers.go", "package pkg\n\nfunc Helper() int { return 1 }\n")
    r.write("app/router.py", "class Router:\n    def route(self):\n        return 1\n")
    r.write("docs/MIGRATION.md", "Router.old is gone; use Router.route\n")
    removed = r.commit("restructure")

    def sym(eid, name, path, mid="m1"):
        return EvidenceRef(eid, mid, "symbol", path, anchor, None, None, name, name + "()", None, "mention")

    checks, verdicts = check_of(r, [
        sym(1, "Router.route", "app/router.py"),
        sym(2, "Helper", "app/util.go"),
        sym(3, "Router.old", "app/router.py"),
        sym(4, "Other.route", None, mid="m2"),
    ])
    assert (checks[1].status, checks[1].reason_code, checks[1].current_line_start) == ("valid", "exists", 2)
    assert (checks[2].status, checks[2].reason_code, checks[2].current_path) == ("valid", "symbol_relocated",
                                                                                 "pkg/helpers.go")
    assert "now at pkg/helpers.go:3" in checks[2].reason
    # a name that survives only in migration notes is not a definition
    assert (checks[3].status, checks[3].reason_code, checks[3].moved_in) == ("deleted", "referenced_symbol_deleted",
                                                                             removed)
    assert checks[4].status == "unresolvable" and verdicts["m2"].outcome == "keep"
    assert verdicts["m1"].outcome == "needs_review"


def test_restructured_folders_globs_and_suffixes(tmp_path):
    r = Repo(tmp_path / "r")
    for n in range(4):
        r.write(f"src/adapters/a{n}.ts", f"export const a{n} = {n};\n")
        r.write(f"testing/t{n}.test", f"test {n}\n")
    r.write(".claude-plugin/plugin.json", "{}\n")
    r.write("other/plugin.json", "{\"x\": 1}\n")
    anchor = r.commit("start")
    # a monorepo split: files deleted, then added rewritten under packages/ (no rename git sees)
    for n in range(4):
        r.rm(f"src/adapters/a{n}.ts")
    r.rm(".claude-plugin/plugin.json")
    split = r.commit("remove old layout")
    for n in range(4):
        r.write(f"packages/adapters/src/a{n}.ts", f"// rewritten\nexport function a{n}() {{ return {n} * 2; }}\n")
        r.mv(f"testing/t{n}.test", f"testing/system/t{n}.test")
    r.write("plugins/beads/.claude-plugin/plugin.json", "{\"name\": \"beads\"}\n")
    moved = r.commit("new layout")
    checks, _ = check_of(r, [
        mention(1, "src/adapters", anchor, typ="folder", target="adapters/"),
        mention(2, "testing/*.test", anchor, typ="glob", target="./testing/*.test"),
        mention(3, ".claude-plugin/plugin.json", anchor),
    ])
    assert (checks[1].status, checks[1].current_path) == ("changed", "packages/adapters/src")
    assert "adapters/ (src/adapters)" in checks[1].reason and split[:7] in checks[1].reason
    assert (checks[2].status, checks[2].current_path, checks[2].moved_in) == ("changed", "testing/system/*.test",
                                                                              moved)
    assert (checks[3].status, checks[3].current_path) == ("changed", "plugins/beads/.claude-plugin/plugin.json")


async def test_tui_accepts_the_proposed_edit_of_a_moved_path(sqlite_engine, tmp_path):
    """Import AGENTS.md, move the file it names, maintain: the queue shows the proposed statement
    and E makes it the statement, the reference now naming the new path; a to approve after."""
    from memtui.widgets.queue_list import QueueList

    from memtui.app import MemtuiApp
    from memtui.importers.formats import import_paths
    from memtui.maintenance.repositories import register_repository
    from memtui.widgets.memory_detail import MemoryDetail

    r = Repo(tmp_path / "r")
    r.write("src/billing/refund.py", "def refund():\n    return 1\n")
    r.write("AGENTS.md", "# Billing\n\n- Refunds are issued in `src/billing/refund.py` only.\n")
    r.commit("start")
    import_paths(sqlite_engine, [r.path / "AGENTS.md"], LEAD, repo_dir=r.path, repository_id="shop")
    register_repository(sqlite_engine, "shop", r.path)
    r.mv("src/billing/refund.py", "src/payments/refund.py")
    r.commit("move")
    maintain(sqlite_engine, now=NOW, only=["revalidate"])
    svc = ReviewService(sqlite_engine)
    (mid,) = [i.memory_id for i in svc.queue_page()]
    detail = svc.detail(mid)
    assert detail.state == "needs_review"
    assert detail.proposed_statement == "Refunds are issued in `src/payments/refund.py` only."
    app = MemtuiApp(sqlite_engine, LEAD)
    async with app.run_test(size=(140, 30)) as pilot:
        for _ in range(3):
            await pilot.pause()
            await app.workers.wait_for_complete()
        pane = app.screen.query_one("#detail", MemoryDetail)
        shown = "\n".join(line.plain for line in pane.lines)
        assert "Proposed edit" in shown and "src/payments/refund.py" in shown
        await pilot.press("E")
        for _ in range(3):
            await pilot.pause()
            await app.workers.wait_for_complete()
        table = app.screen.query_one("#queue", QueueList)
        assert len(table.rows) == 1
        assert "src/payments/refund.py" in table.cell(0, "statement")
    after = svc.detail(mid)
    assert after.statement == "Refunds are issued in `src/payments/refund.py` only."
    assert after.state == "needs_review" and after.proposed_statement is None
    mention_ev = [e for e in after.evidence if "refund.py" in (e.location or "") and e.type == "file_span"
                  and "AGENTS.md" not in e.location]
    assert mention_ev and all("src/payments/refund.py" in e.location for e in mention_ev)
    assert "statement edited" in svc.history(mid)[-1].reason
    svc.decide(mid, "approve", LEAD)
    maintain(sqlite_engine, now=NOW, only=["revalidate"])
    assert svc.detail(mid).state == "active"


def test_folder_moved_then_thinned_out_is_still_moved(tmp_path):
    """go/internal/controller moved to go/core/internal/controller, then most of its files were deleted
    there (kagent): the folder went to the new place all the same."""
    r = Repo(tmp_path / "r")
    for n in range(5):
        r.write(f"go/internal/controller/c{n}.go", f"package controller\n\nfunc C{n}() int {{ return {n} }}\n")
    anchor = r.commit("start")
    for n in range(5):
        r.mv(f"go/internal/controller/c{n}.go", f"go/core/internal/controller/c{n}.go")
    moved = r.commit("move")
    for n in range(4):
        r.rm(f"go/core/internal/controller/c{n}.go")
    r.commit("thin out")
    checks, _ = check_of(r, [mention(1, "go/internal/controller", anchor, typ="folder",
                                     target="go/internal/controller/")])
    assert (checks[1].status, checks[1].current_path, checks[1].moved_in) == (
        "changed", "go/core/internal/controller", moved)


def test_lint_checks_each_line_from_its_own_commit_and_from_any_folder(tmp_path):
    """Found by a first-time user: an edit of the neighbouring line hid a deleted file; linting from a
    subfolder turned stale into unresolvable; a file leaving its heading's folder under the same name
    was not flagged."""
    r = Repo(tmp_path / "r")
    r.write("app/gone.py", "x = 1\n")
    r.write("app/keep.py", "y = 1\n")
    r.write("src/util/logging_setup.py", "z = 1\n")
    r.write("AGENTS.md", "# Notes\n\nThe old entrypoint is `app/gone.py`.\nKeep `app/keep.py` small.\n\n"
                         "## src/util\n\n- `logging_setup.py` configures logging.\n")
    r.commit("start")
    r.rm("app/gone.py")
    r.mv("src/util/logging_setup.py", "lib/logging_setup.py")
    gone = r.commit("delete and move")
    r.write("AGENTS.md", r.read("AGENTS.md").replace("Keep `app/keep.py` small.", "Keep `app/keep.py` tiny."))
    r.commit("edit the neighbouring line")
    (r.path / "src" / "deep").mkdir(parents=True)
    for cwd, file in ((r.path, "AGENTS.md"), (r.path / "src" / "deep", "../../AGENTS.md")):
        out = _memtui("lint", file, cwd=cwd)
        assert out.returncode == 1, out.stdout + out.stderr
        assert out.stdout.splitlines() == [
            f"AGENTS.md:3:24: stale: app/gone.py was deleted in {gone[:7]}",
            f"AGENTS.md:8:4: stale: logging_setup.py (src/util/logging_setup.py) was moved to "
            f"lib/logging_setup.py in {gone[:7]}",
        ]


def test_a_split_folder_is_not_moved_to_one_of_its_parts(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/api/router.py", "def route():\n    return 1\n")
    r.write("src/api/handlers.py", "def handle():\n    return 2\n")
    anchor = r.commit("start")
    r.mv("src/api/router.py", "packages/api/src/router.py")
    r.mv("src/api/handlers.py", "lib/handlers.py")
    split = r.commit("split")
    checks, _ = check_of(r, [mention(1, "src/api", anchor, typ="folder", target="src/api/")])
    assert (checks[1].status, checks[1].reason_code, checks[1].current_path) == ("deleted", "folder_split", None)
    assert split[:7] in checks[1].reason and "lib" in checks[1].reason and "packages/api/src" in checks[1].reason


ENTRY_OLD = "class Account::Entry < ApplicationRecord\n  def amount\n    1\n  end\nend\n"
ENTRY_NEW = "class Entry < ApplicationRecord\n  def amount\n    1\n  end\nend\n"
CLIENTS_OLD = ("class ClaudeClient:\n    def send(self):\n        return 1\n\n\n"
               "class CodexClient:\n    def send(self):\n        return 2\n\n\ndef helper():\n    return 3\n")
CLIENTS_NEW = ("class ClaudeProvider:\n    def send(self):\n        return 1\n\n\n"
               "class CodexProvider:\n    def send(self):\n        return 2\n")


def test_renamed_symbols_are_followed(tmp_path):
    """A symbol defined nowhere at HEAD is followed: through its file's rename to a definition with the
    same last name part (a flattened Ruby namespace), or to a similar name at the same place in the same
    file (``ClaudeClient`` -> ``ClaudeProvider``); a symbol simply removed stays deleted."""
    r = Repo(tmp_path / "r")
    r.write("app/models/account/entry.rb", ENTRY_OLD)
    r.write("src/clients.py", CLIENTS_OLD)
    anchor = r.commit("start")
    r.mv("app/models/account/entry.rb", "app/models/entry.rb")
    r.write("app/models/entry.rb", ENTRY_NEW)
    flatten = r.commit("flatten the namespace")
    r.write("src/clients.py", CLIENTS_NEW)
    rename = r.commit("clients are providers")
    checks, _ = check_of(r, [
        mention(1, "app/models/account/entry.rb", anchor, typ="symbol", target="Account::Entry", symbol="Account.Entry"),
        mention(2, "src/clients.py", anchor, typ="symbol", target="ClaudeClient", symbol="ClaudeClient"),
        mention(3, "src/clients.py", anchor, typ="symbol", target="helper()", symbol="helper"),
    ])
    c = checks[1]
    assert (c.status, c.reason_code, c.renamed_to, c.current_path, c.current_line_start, c.moved_in) == (
        "changed", "symbol_renamed", "Entry", "app/models/entry.rb", 1, flatten)
    assert c.reason == f"Symbol Account::Entry was renamed to Entry (app/models/entry.rb:1) in {flatten[:7]}"
    c = checks[2]
    assert (c.status, c.reason_code, c.renamed_to, c.current_path, c.current_line_start, c.moved_in) == (
        "changed", "symbol_renamed", "ClaudeProvider", "src/clients.py", 1, rename)
    assert (checks[3].status, checks[3].reason_code, checks[3].moved_in) == (
        "deleted", "referenced_symbol_deleted", rename)


def test_maintain_proposes_the_renamed_symbol(tmp_path):
    """Import at the old commit, rename, maintain: the memory goes to review with the new name proposed."""
    r = Repo(tmp_path / "r")
    r.write("src/clients.py", CLIENTS_OLD)
    r.write("AGENTS.md", "# Notes\n\n- Requests go through `ClaudeClient` in `src/clients.py`.\n")
    r.commit("start")
    db = tmp_path / "m.db"
    run = lambda *a: subprocess.run([sys.executable, "-m", "memtui", "--db", str(db), *a], cwd=r.path,  # noqa: E731
                                    env={**GIT_ENV, "MEMTUI_ACTOR": "t"}, capture_output=True, text=True)
    assert run("import", "AGENTS.md", "--repo", ".", "--repository-id", "r").returncode == 0
    r.write("src/clients.py", CLIENTS_NEW)
    r.commit("rename")
    assert run("maintain", "--only", "revalidate", "--repo", "r").returncode == 0
    from sqlmodel import Session, select

    from memtui.store.engine import open_store
    from memtui.store.models import Memory, Revalidation

    engine = open_store(str(db))
    with Session(engine) as s:
        (m,) = s.exec(select(Memory)).all()
        (rv,) = s.exec(select(Revalidation).where(Revalidation.memory_id == m.memory_id)).all()
    engine.dispose()
    assert m.state == "needs_review"
    assert rv.proposed_statement == m.statement.replace("`ClaudeClient`", "`ClaudeProvider`") != m.statement


def test_folder_moved_into_a_new_layout_and_a_name_that_resolves_as_written(tmp_path):
    """src/adapters/{github,slack}.ts became packages/adapters/src/{forge/github,chat/slack}/adapter.ts:
    the folder moved to the deepest new folder holding most of its children; src/tool/ whose files mostly
    went to tool/ (one to proto/) moved to tool/; runner/ went where two of its three children went; a file resolved by suffix at the
    anchor (.beads/issues.jsonl for `issues.jsonl`) whose name as written exists at HEAD is valid."""
    r = Repo(tmp_path / "r")
    r.write("src/adapters/github.ts", "export const github = 1;\n")
    r.write("src/adapters/slack.ts", "export const slack = 2;\n")
    for n in ("a", "b", "c"):
        r.write(f"src/tool/{n}.py", f"{n.upper()} = 1\n")
    r.write(".beads/issues.jsonl", "{}\n")
    r.write("runner/Cargo.toml", "[package]\n")
    r.write("runner/src/main.rs", "fn main() {}\n")
    for n in range(4):  # most of its files, but one child (tests/) of three
        r.write(f"runner/tests/t{n}.sqltest", f"test {n}\n")
    anchor = r.commit("start")
    r.mv("src/adapters/github.ts", "packages/adapters/src/forge/github/adapter.ts")
    r.mv("src/adapters/slack.ts", "packages/adapters/src/chat/slack/adapter.ts")
    layout = r.commit("packages")
    r.mv("src/tool/a.py", "tool/a.py")
    r.mv("src/tool/b.py", "tool/b.py")
    r.mv("src/tool/c.py", "proto/c.py")
    r.mv(".beads/issues.jsonl", "issues.jsonl")
    r.mv("runner/Cargo.toml", "testing/runner/Cargo.toml")
    r.mv("runner/src/main.rs", "testing/runner/src/main.rs")
    for n in range(4):
        r.mv(f"runner/tests/t{n}.sqltest", f"conformance/sqltests/t{n}.sqltest")
    r.commit("dissolve src")
    checks, _ = check_of(r, [
        mention(1, "src/adapters", anchor, typ="folder", target="src/adapters/"),
        mention(2, "src/tool", anchor, typ="folder", target="src/tool/"),
        mention(3, ".beads/issues.jsonl", anchor, target="issues.jsonl"),
        mention(4, "runner", anchor, typ="folder", target="runner/"),
    ])
    # where most of its children (Cargo.toml, src/, tests/) went, not most of its files
    assert (checks[4].status, checks[4].reason_code, checks[4].current_path) == ("changed", "path_moved", "testing/runner")
    assert (checks[1].status, checks[1].reason_code, checks[1].current_path, checks[1].moved_in) == (
        "changed", "path_moved", "packages/adapters/src", layout)
    assert (checks[2].status, checks[2].reason_code, checks[2].current_path) == ("changed", "path_moved", "tool")
    assert (checks[3].status, checks[3].reason_code, checks[3].reason) == (
        "valid", "exists", "issues.jsonl exists at HEAD as written")


def test_lint_suggests_the_renamed_symbol(tmp_path):
    """`memtui lint --suggest` rewrites a renamed symbol in place (ClaudeClient -> ClaudeProvider)."""
    r = Repo(tmp_path / "r")
    r.write("src/clients.py", CLIENTS_OLD)
    r.write("AGENTS.md", "# Notes\n\n- Requests go through `ClaudeClient`.\n")
    r.commit("start")
    r.write("src/clients.py", CLIENTS_NEW)
    rename = r.commit("rename")
    run = lambda *a: subprocess.run([sys.executable, "-m", "memtui", "lint", "AGENTS.md", "--repo", ".", *a],  # noqa: E731
                                    cwd=r.path, env=GIT_ENV, capture_output=True, text=True)
    out = run()
    assert out.returncode == 1
    assert out.stdout.strip() == (f"AGENTS.md:3:24: stale: Symbol ClaudeClient was renamed to ClaudeProvider "
                                  f"(src/clients.py:1) in {rename[:7]}")
    diff = run("--suggest").stdout
    assert "-- Requests go through `ClaudeClient`.\n+- Requests go through `ClaudeProvider`.\n" in diff


def test_module_became_a_package_and_a_symbol_once_defined_in_many_files(tmp_path):
    """src/sub_agent.py renamed to proto/sub_agent.py, then replaced by the package proto/sub_agent/:
    moved to proto/sub_agent/__init__.py; a symbol defined in four files when written (no path kept,
    the importer's excerpt says so) and in none at HEAD is deleted, naming the commit, not "never existed"."""
    r = Repo(tmp_path / "r")
    r.write("src/sub_agent.py", "class Profile:\n    pass\n")
    for n in range(4):
        r.write(f"m{n}.rb", "def sync_data\nend\n")
    anchor = r.commit("start")
    r.mv("src/sub_agent.py", "proto/sub_agent.py")
    r.commit("move")
    r.rm("proto/sub_agent.py")
    r.write("proto/sub_agent/__init__.py", "from .profiles import *\n")
    r.write("proto/sub_agent/profiles.py", "".join(f"PROFILE_{n} = {n} * 7\n" for n in range(12)))  # no rename git sees
    package = r.commit("a package")
    for n in range(4):
        r.write(f"m{n}.rb", "def sync\nend\n")
    removed = r.commit("sync")
    many = EvidenceRef(2, "m2", "symbol", None, anchor, None, None, "sync_data", "sync_data", None, "mention",
                       "defined in 4 files: m0.rb, m1.rb, m2.rb, ...")
    checks, _ = check_of(r, [mention(1, "src/sub_agent.py", anchor), many,
                             EvidenceRef(3, "m3", "symbol", None, anchor, None, None, "nowhere_fn", "nowhere_fn",
                                         None, "mention")])
    assert (checks[1].status, checks[1].reason_code, checks[1].current_path, checks[1].moved_in) == (
        "changed", "path_moved", "proto/sub_agent/__init__.py", package)
    assert (checks[2].status, checks[2].reason_code, checks[2].moved_in) == ("deleted", "referenced_symbol_deleted", removed)
    assert (checks[3].status, checks[3].reason_code) == ("unresolvable", "reference_unresolvable")


def test_moves_are_followed_on_a_clone_lacking_a_blob(tmp_path):
    """Rename detection over the whole history fails when the clone lacks a blob it would compare (a
    partial clone): moves are still followed, through git in the commits it can read (``src/x.py`` ->
    ``pkg/x.py``) and, in the commit it cannot, by the same blob moved (``lib/y.py`` -> ``lib2/y.py``)
    or the one same-named file added (``lib/z.py`` -> ``core/z.py``, edited on the way); the reasons
    name the commits that moved them."""
    r = Repo(tmp_path / "r")
    r.write("src/x.py", "def x():\n    return 1\n")
    r.write("lib/y.py", "Y = 2\n")
    r.write("lib/z.py", "Z = 3\n")
    r.write("data/big.txt", "big\n" * 2000)
    anchor = r.commit("start")
    r.mv("src/x.py", "pkg/x.py")
    first = r.commit("move x")
    r.rm("data/big.txt")
    r.write("data2/other.txt", "other\n" * 2000)
    r.mv("lib/y.py", "lib2/y.py")
    r.rm("lib/z.py")
    r.write("core/z.py", "Z = 4\n# edited\n")
    second = r.commit("restructure")
    oid = git(r.path, "rev-parse", f"{anchor}:data/big.txt").strip()
    (r.path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    checks, _ = check_of(r, [mention(1, "src/x.py", anchor), mention(2, "lib/y.py", anchor, mid="m2"),
                             mention(3, "lib/z.py", anchor, mid="m3")])
    assert [(checks[i].reason_code, checks[i].current_path) for i in (1, 2, 3)] == [
        ("path_moved", "pkg/x.py"), ("path_moved", "lib2/y.py"), ("path_moved", "core/z.py")]
    assert f"in {first[:7]}" in checks[1].reason and f"in {second[:7]}" in checks[2].reason
    assert "was moved to core/z.py" in checks[3].reason


def test_folder_moved_into_an_existing_folder(tmp_path):
    """``plugin/{idp,webhook,cron}`` moved under ``internal/`` (which already held ``internal/util``),
    each keeping its layout: ``plugin/`` was moved to ``internal``, not deleted."""
    r = Repo(tmp_path / "r")
    r.write("internal/util/u.go", "package util\n")
    for name in ("idp", "webhook", "cron"):
        r.write(f"plugin/{name}/{name}.go", f"package {name}\n\nfunc Run{name.title()}() {{}}\n")
    anchor = r.commit("start")
    for name in ("idp", "webhook", "cron"):
        r.mv(f"plugin/{name}/{name}.go", f"internal/{name}/{name}.go")
    move = r.commit("move plugins under internal")
    checks, _ = check_of(r, [mention(1, "plugin", anchor, typ="folder", target="/plugin/")])
    assert (checks[1].status, checks[1].reason_code, checks[1].current_path) == ("changed", "path_moved", "internal")
    assert f"in {move[:7]}" in checks[1].reason


def test_a_folder_goes_where_most_of_its_content_went(tmp_path):
    """``crates/workers``: its manifest and two-line ``lib.rs`` were paired by git with a new crate
    ``crates/data-usage``, its code (``workers.rs``, most of its bytes) went to ``crates/concurrency``:
    the folder was moved to ``crates/concurrency`` (votes weigh files by size, not by count)."""
    r = Repo(tmp_path / "r")
    r.write("crates/workers/Cargo.toml", "[package]\nname = \"workers\"\n")
    r.write("crates/workers/src/lib.rs", "pub mod workers;\n")
    r.write("crates/workers/src/workers.rs", "".join(f"pub fn worker_{i}() -> u32 {{ {i} }}\n" for i in range(80)))
    r.write("crates/other/src/lib.rs", "pub fn other() {}\n")
    anchor = r.commit("start")
    r.mv("crates/workers/Cargo.toml", "crates/data-usage/Cargo.toml")
    r.mv("crates/workers/src/lib.rs", "crates/data-usage/src/lib.rs")
    r.mv("crates/workers/src/workers.rs", "crates/concurrency/src/workers.rs")
    r.commit("split workers")
    checks, _ = check_of(r, [mention(1, "crates/workers", anchor, typ="folder", target="workers")])
    assert (checks[1].reason_code, checks[1].current_path) == ("path_moved", "crates/concurrency")


def test_a_glob_whose_surviving_files_moved_together_is_moved(tmp_path):
    """``testing/*.test``: eight of ten files deleted (three of their names reappear in a vendored
    ``upstream/`` suite), the two left moved to ``testing/system/``: the glob was moved there (most of
    what git followed went there; names alone do not outvote that), not emptied."""
    r = Repo(tmp_path / "r")
    names = ["a", "b", "c", "d", "e", "f", "g", "h", "all", "vtab"]
    for name in names:
        r.write(f"testing/{name}.test", f"test {name}\n")
    anchor = r.commit("start")
    for name in names[:8]:
        r.rm(f"testing/{name}.test")
    for name in names[:3]:
        r.write(f"upstream/{name}.test", f"upstream suite {name} " * 40 + "\n")
    r.mv("testing/all.test", "testing/system/all.test")
    r.mv("testing/vtab.test", "testing/system/vtab.test")
    move = r.commit("move the rest")
    checks, _ = check_of(r, [mention(1, "testing/*.test", anchor, typ="glob", target="./testing/*.test")])
    assert (checks[1].reason_code, checks[1].current_path) == ("path_moved", "testing/system/*.test")
    assert f"in {move[:7]}" in checks[1].reason


def test_a_folder_name_reused_for_other_files_is_moved(tmp_path):
    """``internal/agent/`` (the execution agent) was moved to ``internal/runtime/agent``; later a new,
    unrelated ``internal/agent/`` package appeared: the line's folder was moved, not still there. A folder
    that kept most of its files is still valid."""
    r = Repo(tmp_path / "r")
    for name in ("agent", "runner", "status"):
        r.write(f"internal/agent/{name}.go", f"package agent\n\nfunc {name.title()}() {{}}\n")
        r.write(f"internal/models/{name}.go", f"package models\n\ntype {name.title()} struct{{}}\n")
    anchor = r.commit("start")
    for name in ("agent", "runner", "status"):
        r.mv(f"internal/agent/{name}.go", f"internal/runtime/agent/{name}.go")
    move = r.commit("move the execution agent")
    r.write("internal/agent/llm.go", "package agent\n\nfunc Chat() {}\n")
    r.rm("internal/models/runner.go")
    r.commit("an LLM agent")
    for name in ("a", "b", "c"):  # a folder restructured inside itself is still there
        r.write(f"crates/obs/src/{name}.rs", f"pub fn {name}() {{}}\n")
    obs = r.commit("obs")
    for name in ("a", "b", "c"):
        r.mv(f"crates/obs/src/{name}.rs", f"crates/obs/src/metrics/{name}.rs")
    r.commit("restructure obs")
    checks, _ = check_of(r, [mention(1, "internal/agent", anchor, typ="folder", target="internal/agent/"),
                             mention(2, "internal/models", anchor, typ="folder", target="internal/models/", mid="m2"),
                             mention(3, "crates/obs", obs, typ="folder", target="obs", mid="m3")])
    assert (checks[3].status, checks[3].reason_code) == ("valid", "exists")
    # a folder that moved most of its files away but kept a subfolder of its own is thinned out, not reused
    r.write("testing/cli_tests/t.py", "T = 1\n")
    for name in ("a", "b", "c", "d"):
        r.write(f"testing/{name}.test", f"test {name}\n")
    kept = r.commit("tests")
    for name in ("a", "b", "c", "d"):
        r.mv(f"testing/{name}.test", f"conformance/{name}.test")
    r.write("testing/runner.py", "R = 1\n")
    r.commit("move the tests")
    thinned, _ = check_of(r, [mention(4, "testing", kept, typ="folder", target="./testing/", mid="m4")])
    assert (thinned[4].status, thinned[4].reason_code) == ("valid", "exists")
    assert (checks[1].reason_code, checks[1].current_path) == ("path_moved", "internal/runtime/agent")
    assert f"in {move[:7]}" in checks[1].reason and "holds other files" in checks[1].reason
    assert (checks[2].status, checks[2].reason_code) == ("valid", "exists")

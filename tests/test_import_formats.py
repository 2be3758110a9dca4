"""Importers for the memory formats agents write (issue 5, "Import" items 1-4).

Every input is a small file written for these tests (tests/data/formats/, see its README): nested
AGENTS.md, Cursor rule front matter, @imports, a MEMORY.md whose last line corrects an earlier
one, an MCP graph with a broken line, a Mem0 list without ``results``, a double-encoded Letta
``.af`` with a block over its limit, and a Markdown line naming a file (and a symbol) that a later
commit deletes. Expected values (line numbers, span hashes) are computed here from the files with
plain Python, not with the code under test.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlmodel import Session, select

from memtui.domain.invariants import Actor, InvariantViolation
from memtui.importers.formats import detect_format, import_paths
from memtui.importers.native import ImportRefused
from memtui.review.lifecycle import transition
from memtui.store.models import Evidence, Memory, Revalidation, StateHistory

DATA = Path(__file__).resolve().parent / "data" / "formats"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
ACTOR = Actor(type="human", id="importer-1", role="reviewer")

from tests.gitrepo import GIT_ENV


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True,
                          text=True).stdout.strip()


def put(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def commit(root: Path, msg: str = "change") -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-gpg-sign", "-m", msg)
    return git(root, "rev-parse", "HEAD")


def line_no(text: str, needle: str) -> int:
    """1-based line of the first line containing ``needle`` (independent of the importer)."""
    return next(i for i, ln in enumerate(text.splitlines(), start=1) if needle in ln)


def span_sha(text: str, start: int, end: int) -> str:
    lines = text.split("\n")
    data = "".join(ln + "\n" for ln in lines[start - 1:end])
    return "sha256:" + hashlib.sha256(data.encode()).hexdigest()


@pytest.fixture
def repo(tmp_path) -> Path:
    """A git repository "order-service" with instruction files at their real names and the code they name."""
    root = tmp_path / "order-service"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    put(root, "AGENTS.md", (DATA / "agents_root.md").read_text())
    put(root, "services/billing/AGENTS.md", (DATA / "agents_billing.md").read_text())
    put(root, "services/billing/money.py", "class Money:\n    def add(self, other):\n        return other\n")
    put(root, ".cursor/rules/python.mdc", (DATA / "cursor_python.mdc").read_text())
    put(root, ".cursor/rules/sql.mdc", (DATA / "cursor_sql.mdc").read_text())
    put(root, "CLAUDE.md", (DATA / "claude_root.md").read_text())
    put(root, "docs/agent-notes.md", (DATA / "docs_agent_notes.md").read_text())
    put(root, "migrations/env.py", "config = {}\n")
    put(root, "src/orders/rules.py", "class RuleRegistry:\n    def register(self, rule):\n        return rule\n")
    put(root, "src/orders/legacy_export.py", "def export_orders():\n    return []\n")
    put(root, "src/orders/payments.py",
        "class PaymentGateway:\n    def charge(self, amount):\n        return amount\n\n"
        "    def refund(self, amount):\n        return -amount\n")
    put(root, "tests/conftest.py", "")
    commit(root, "initial")
    # a file outside the repository that CLAUDE.md tries to import
    (tmp_path / "outside-notes.md").write_text("- Secret plans that must not be imported.\n")
    return root


def memories(engine) -> dict[str, Memory]:
    with Session(engine) as s:
        return {m.memory_id: m for m in s.exec(select(Memory))}


def by_statement(engine, fragment: str) -> Memory:
    found = [m for m in memories(engine).values() if fragment in m.statement]
    assert len(found) == 1, (fragment, [m.statement for m in found])
    return found[0]


def evidence_of(engine, memory_id: str) -> list[Evidence]:
    with Session(engine) as s:
        return list(s.exec(select(Evidence).where(Evidence.memory_id == memory_id).order_by(Evidence.ordinal)))


def history_of(engine, memory_id: str) -> list[StateHistory]:
    with Session(engine) as s:
        return list(s.exec(select(StateHistory).where(StateHistory.memory_id == memory_id)
                           .order_by(StateHistory.event_id)))


# -- detection --------------------------------------------------------------------------------------

def test_detect_format_by_name_and_content(tmp_path, repo):
    assert detect_format(repo / "AGENTS.md") == "markdown"
    assert detect_format(repo / "services/billing/AGENTS.md") == "markdown"
    assert detect_format(repo / ".cursor/rules/python.mdc") == "markdown"
    assert detect_format(repo) == "markdown"
    put(tmp_path, ".clinerules", "- Always run the linter.\n")
    assert detect_format(tmp_path / ".clinerules") == "markdown"
    assert detect_format(DATA / "memory" / "MEMORY.md") == "markdown"
    assert detect_format(DATA / "graph.json") == "mcp"  # JSON Lines under a .json name, first lines valid
    put(tmp_path, "graph.jsonl", '{"type":"relation","from":"a","to":"b","relationType":"uses"}\n')
    assert detect_format(tmp_path / "graph.jsonl") == "mcp"
    assert detect_format(DATA / "mem0_list.json") == "mem0"
    assert detect_format(DATA / "mem0_results.json") == "mem0"
    assert detect_format(DATA / "agent_double.af") == "letta"
    put(tmp_path, "agent.json", json.dumps(json.dumps({"core_memory": [{"label": "human", "value": "x"}]})))
    assert detect_format(tmp_path / "agent.json") == "letta"
    put(tmp_path, "native.json", json.dumps([{"memoryId": "m1", "type": "code_fact", "statement": "x",
                                              "scope": {}}]))
    assert detect_format(tmp_path / "native.json") == "native"
    put(tmp_path, "native.yaml", "memories: []\n")
    assert detect_format(tmp_path / "native.yaml") == "native"


# -- Markdown ---------------------------------------------------------------------------------------

def test_markdown_candidates_scope_evidence_and_provenance(sqlite_engine, repo):
    head = git(repo, "rev-parse", "HEAD")
    report = import_paths(sqlite_engine, [repo], ACTOR, repo_dir=repo)
    assert not report.rejected
    agents = (repo / "AGENTS.md").read_text()

    # a bullet under "## Commands": a runbook candidate, scoped to the repository, with its span at HEAD
    run = by_statement(sqlite_engine, "Run the tests with `pytest -q`")
    n = line_no(agents, "Run the tests")
    assert (run.state, run.review_state, run.origin) == ("candidate", "pending", "imported")
    assert run.type == "runbook" and run.repository_id == "order-service" and run.module_path is None
    assert run.import_source == f"markdown:AGENTS.md#L{n}"
    assert {"import:markdown", "source:AGENTS.md", f"line:{n}", "section:commands"} <= set(run.tags)
    (span,) = evidence_of(sqlite_engine, run.memory_id)
    assert (span.type, span.path, span.commit_sha, span.line_start, span.line_end) == ("file_span", "AGENTS.md",
                                                                                        head, n, n)
    assert span.span_hash == span_sha(agents, n, n)
    (created,) = history_of(sqlite_engine, run.memory_id)
    assert (created.from_state, created.to_state, created.actor_id) == (None, "candidate", "importer-1")

    # nested AGENTS.md: narrowed to its folder; `money.py` resolves next to it; Money is a symbol there
    money = by_statement(sqlite_engine, "Use `Money`")
    assert money.module_path == "services/billing" and money.repository_id == "order-service"
    kinds = {(e.type, e.path, e.symbol) for e in evidence_of(sqlite_engine, money.memory_id)}
    assert ("file_span", "services/billing/money.py", None) in kinds
    assert ("symbol", "services/billing/money.py", "Money") in kinds

    # paths and Class.method named in backticks become mention evidence at HEAD
    rules = by_statement(sqlite_engine, "RuleRegistry.register")
    ev = evidence_of(sqlite_engine, rules.memory_id)
    sym = next(e for e in ev if e.type == "symbol")
    assert (sym.path, sym.symbol, sym.line_start, sym.line_end, sym.commit_sha, sym.ref) == (
        "src/orders/rules.py", "RuleRegistry.register", 2, 3, head, "mention")
    assert any(e.type == "file_span" and e.path == "src/orders/rules.py" and e.line_start is None for e in ev)

    # "Testing:" label: its bullet is a test convention and keeps the label as its subject; the label line
    # itself and the code block are not memories
    fixtures = by_statement(sqlite_engine, "Shared fixtures live in")
    assert fixtures.statement == "Testing: Shared fixtures live in `tests/conftest.py`."
    assert fixtures.type == "test_convention" and "label:testing" in fixtures.tags
    statements = [m.statement for m in memories(sqlite_engine).values()]
    assert not any(s.rstrip(":") == "Testing" or "code blocks" in s or s.startswith("make dist") for s in statements)

    # .mdc front matter: globs -> applies_to; description and alwaysApply kept as tags
    hints = by_statement(sqlite_engine, "Use type hints")
    assert hints.applies_to == ["src/**/*.py", "tests/**/*.py"] and hints.type == "repo_convention"
    assert {"description:Python style for the order service", "alwaysApply:false"} <= set(hints.tags)
    sql = by_statement(sqlite_engine, "Migrations are append-only")  # `globs: *.sql` is not YAML
    assert sql.applies_to == ["*.sql"] and "alwaysApply:true" in sql.tags

    # @docs/agent-notes.md followed (inside the repo), @../outside-notes.md not (outside the repo)
    notes = by_statement(sqlite_engine, "Alembic")
    assert notes.import_source.startswith("markdown:docs/agent-notes.md#L")
    assert "imported-by:CLAUDE.md" in notes.tags
    assert any(e.type == "file_span" and e.path == "migrations/env.py" for e in evidence_of(sqlite_engine,
                                                                                           notes.memory_id))
    assert not any("Secret plans" in s for s in statements)
    assert any("outside-notes.md" in w and "not read" in w for w in report.warnings)
    assert not any("See @docs" in s for s in statements)  # the pointer line itself is not a memory

    # the same files again: nothing new, no new events
    events = sum(len(history_of(sqlite_engine, mid)) for mid in memories(sqlite_engine))
    again = import_paths(sqlite_engine, [repo], ACTOR, repo_dir=repo)
    assert again.imported == [] and sorted(again.unchanged) == sorted(report.imported)
    assert sum(len(history_of(sqlite_engine, mid)) for mid in memories(sqlite_engine)) == events


def test_markdown_reimport_supersedes_changed_lines_only(sqlite_engine, repo):
    first = import_paths(sqlite_engine, [repo / "AGENTS.md"], ACTOR, repo_dir=repo)
    old_build = by_statement(sqlite_engine, "Build the wheel")
    old_fixtures = by_statement(sqlite_engine, "Shared fixtures live in")
    reviewed = by_statement(sqlite_engine, "Never call `PaymentGateway.charge`")
    untouched = by_statement(sqlite_engine, "Run the tests with")
    with Session(sqlite_engine) as s, s.begin():  # a reviewer already sent one of them to review
        transition(s, reviewed.memory_id, "needs_review", ACTOR, "checking with the payments team")

    text = (repo / "AGENTS.md").read_text()
    text = text.replace("# Order service\n", "# Order service\n\nA new introduction line for agents.\n")  # shift
    text = text.replace("Build the wheel with `make dist`.", "Build the wheel with `make wheel`.")  # edit
    text = text.replace("- Shared fixtures live in `tests/conftest.py`.\n", "")  # remove
    text = text.replace("- Never call `PaymentGateway.charge` from tests.",
                        "- Never call `PaymentGateway.charge` or `PaymentGateway.refund` from tests.")
    put(repo, "AGENTS.md", text)
    commit(repo, "edit AGENTS.md")
    report = import_paths(sqlite_engine, [repo / "AGENTS.md"], ACTOR, repo_dir=repo)

    new_build = by_statement(sqlite_engine, "make wheel")
    assert report.superseded == [(old_build.memory_id, new_build.memory_id)]
    after = memories(sqlite_engine)
    assert after[old_build.memory_id].state == "superseded"
    assert after[old_build.memory_id].superseded_by == new_build.memory_id
    assert new_build.logical_memory_id == old_build.logical_memory_id
    assert new_build.import_source == f"markdown:AGENTS.md#L{line_no(text, 'make wheel')}"
    # the removed line's candidate is withdrawn, the reviewed one is left alone (a new candidate beside it)
    assert report.withdrawn == [old_fixtures.memory_id]
    assert after[old_fixtures.memory_id].state == "invalidated"
    assert after[reviewed.memory_id].state == "needs_review" and reviewed.memory_id in report.left_alone
    assert by_statement(sqlite_engine, "PaymentGateway.refund").state == "candidate"
    # lines that only moved are unchanged: same id, same evidence (revalidation follows the shift)
    assert untouched.memory_id in report.unchanged and after[untouched.memory_id].state == "candidate"
    assert len(report.imported) == 3  # the intro line, the edited line, the reviewed line's new version
    assert set(first.imported) - set(report.unchanged) == {old_build.memory_id, old_fixtures.memory_id,
                                                           reviewed.memory_id}
    history = history_of(sqlite_engine, old_build.memory_id)
    assert [(h.from_state, h.to_state) for h in history] == [(None, "candidate"), ("candidate", "superseded")]
    assert "AGENTS.md" in history[-1].reason and new_build.memory_id in history[-1].reason


def test_reverted_line_comes_back_as_a_revision(sqlite_engine, repo):
    import_paths(sqlite_engine, [repo / "AGENTS.md"], ACTOR, repo_dir=repo)
    original = by_statement(sqlite_engine, "Build the wheel with `make dist`")
    text = (repo / "AGENTS.md").read_text()
    put(repo, "AGENTS.md", text.replace("make dist`.", "make wheel`."))
    commit(repo)
    import_paths(sqlite_engine, [repo / "AGENTS.md"], ACTOR, repo_dir=repo)
    edited = by_statement(sqlite_engine, "make wheel")
    put(repo, "AGENTS.md", text)  # the edit is reverted
    commit(repo)
    report = import_paths(sqlite_engine, [repo / "AGENTS.md"], ACTOR, repo_dir=repo)
    assert report.imported == [original.memory_id + "-r2"]
    assert report.superseded == [(edited.memory_id, original.memory_id + "-r2")]
    after = memories(sqlite_engine)
    assert after[original.memory_id].state == "superseded" and after[original.memory_id + "-r2"].state == "candidate"
    assert after[original.memory_id + "-r2"].logical_memory_id == original.logical_memory_id
    again = import_paths(sqlite_engine, [repo / "AGENTS.md"], ACTOR, repo_dir=repo)
    assert again.imported == [] and original.memory_id + "-r2" in again.unchanged


def test_uncommitted_file_is_not_anchored_then_refreshed(sqlite_engine, repo):
    put(repo, "CLAUDE.local.md", "- Use my local Postgres on port 5433.\n")
    report = import_paths(sqlite_engine, [repo / "CLAUDE.local.md"], ACTOR, repo_dir=repo)
    local = by_statement(sqlite_engine, "port 5433")
    (span,) = evidence_of(sqlite_engine, local.memory_id)
    assert span.commit_sha is None and span.path == "CLAUDE.local.md" and (span.line_start, span.line_end) == (1, 1)
    assert {"uncommitted", "local"} <= set(local.tags)
    assert any("CLAUDE.local.md" in w and "HEAD" in w for w in report.warnings)
    head = commit(repo, "commit the local file")
    again = import_paths(sqlite_engine, [repo / "CLAUDE.local.md"], ACTOR, repo_dir=repo)
    # the same statement: not a new memory; the still-candidate memory gets its evidence anchored
    assert again.imported == [] and again.refreshed == [local.memory_id]
    (span,) = evidence_of(sqlite_engine, local.memory_id)
    assert span.commit_sha == head and span.span_hash == span_sha((repo / "CLAUDE.local.md").read_text(), 1, 1)
    assert "uncommitted" not in memories(sqlite_engine)[local.memory_id].tags
    note = history_of(sqlite_engine, local.memory_id)[-1]
    assert (note.from_state, note.to_state) == ("candidate", "candidate") and "refreshed" in note.reason
    assert import_paths(sqlite_engine, [repo / "CLAUDE.local.md"], ACTOR, repo_dir=repo).unchanged == [
        local.memory_id]


def test_deleted_file_and_symbol_send_the_line_to_review(sqlite_engine, repo):
    """Acceptance: AGENTS.md names a file (and a method) that a later commit deletes; after import and
    maintenance, that line's memory is in review with a reason naming the file."""
    from memtui.maintenance.repositories import register_repository
    from memtui.maintenance.runner import maintain

    import_paths(sqlite_engine, [repo / "AGENTS.md"], ACTOR, repo_dir=repo)
    legacy = by_statement(sqlite_engine, "legacy_export.py")
    charge = by_statement(sqlite_engine, "PaymentGateway.charge")
    run = by_statement(sqlite_engine, "Run the tests with")
    git(repo, "rm", "-q", "src/orders/legacy_export.py")
    put(repo, "src/orders/payments.py", "class PaymentGateway:\n    def refund(self, amount):\n        return -amount\n")
    commit(repo, "remove the legacy exporter and charge()")

    register_repository(sqlite_engine, "order-service", repo)
    maintain(sqlite_engine, now=NOW, repo=str(repo))
    after = memories(sqlite_engine)
    assert after[legacy.memory_id].state == "needs_review"
    assert after[charge.memory_id].state == "needs_review"
    assert after[run.memory_id].state == "candidate"  # its line and AGENTS.md are untouched
    with Session(sqlite_engine) as s:
        legacy_result = s.get(Revalidation, legacy.memory_id)
        charge_result = s.get(Revalidation, charge.memory_id)
    assert any("src/orders/legacy_export.py" in r and "deleted" in r for r in legacy_result.reasons)
    assert "file_deleted" in legacy_result.reason_codes
    assert any("PaymentGateway.charge" in r for r in charge_result.reasons)
    assert "referenced_symbol_deleted" in charge_result.reason_codes
    moved = history_of(sqlite_engine, legacy.memory_id)[-1]
    assert (moved.from_state, moved.to_state) == ("candidate", "needs_review")
    assert "src/orders/legacy_export.py" in moved.reason


def test_claude_memory_folder_later_line_corrects_earlier(sqlite_engine, tmp_path):
    folder = tmp_path / "memory"  # an auto-memory folder outside any repository
    shutil.copytree(DATA / "memory", folder)
    text = (folder / "MEMORY.md").read_text()
    report = import_paths(sqlite_engine, [folder], ACTOR, repository_id="order-service")
    assert not report.rejected
    earlier = by_statement(sqlite_engine, "The test command is `make test`")
    later = by_statement(sqlite_engine, "Correction: the test command is now")
    assert earlier.state == "superseded" and earlier.superseded_by == later.memory_id
    assert later.state == "candidate" and (earlier.memory_id, later.memory_id) in report.corrected
    created = history_of(sqlite_engine, earlier.memory_id)[0]
    assert created.to_state == "superseded" and f"line {line_no(text, 'Correction:')}" in created.reason
    # the other lines stay; the index line pointing at the topic file is not a memory; the topic file is read
    assert by_statement(sqlite_engine, "staging database").state == "candidate"
    assert not any("Testing notes" in m.statement for m in memories(sqlite_engine).values())
    topic = by_statement(sqlite_engine, "must not touch the network")
    assert topic.type == "repo_convention" and {"memory-type:feedback", "topic:testing"} <= set(topic.tags)
    (doc,) = evidence_of(sqlite_engine, topic.memory_id)
    assert doc.type == "doc" and doc.commit_sha is None and doc.line_start == line_no(
        (folder / "testing.md").read_text(), "network")
    assert topic.repository_id == "order-service"
    assert import_paths(sqlite_engine, [folder], ACTOR, repository_id="order-service").imported == []


def test_correction_added_later_supersedes_the_earlier_candidate(sqlite_engine, tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    lines = (DATA / "memory" / "MEMORY.md").read_text().splitlines(keepends=True)
    (folder / "MEMORY.md").write_text("".join(ln for ln in lines if "Correction" not in ln))
    import_paths(sqlite_engine, [folder / "MEMORY.md"], ACTOR)
    earlier = by_statement(sqlite_engine, "The test command is `make test`")
    assert earlier.state == "candidate"
    (folder / "MEMORY.md").write_text("".join(lines))
    report = import_paths(sqlite_engine, [folder / "MEMORY.md"], ACTOR)
    later = by_statement(sqlite_engine, "Correction:")
    after = memories(sqlite_engine)[earlier.memory_id]
    assert after.state == "superseded" and after.superseded_by == later.memory_id
    assert report.imported == [later.memory_id] and (earlier.memory_id, later.memory_id) in report.corrected


def test_find_corrections_only_for_the_same_setting():
    from memtui.importers.markdown import find_corrections

    texts = ["The test command is `make test`.", "The staging database is called `orders-staging`.",
             "The staging database is reset nightly.", "Deploy target: eu-west-1",
             "Deploy target: us-east-2", "Lint with flake8 before pushing.",
             "Actually we no longer lint with flake8; ruff replaced it.", "The test command is `pytest -q`."]
    found = find_corrections(texts)
    assert found[0][0] == 7 and found[3][0] == 4 and found[5][0] == 6
    assert 1 not in found and 2 not in found and set(found) == {0, 3, 5}


# -- MCP memory server ------------------------------------------------------------------------------

def test_mcp_broken_line_refuses_unless_skip_invalid(sqlite_engine):
    with pytest.raises(ImportRefused) as exc:
        import_paths(sqlite_engine, [DATA / "graph.json"], ACTOR, repository_id="order-service")
    (err,) = exc.value.errors
    assert err.line == line_no((DATA / "graph.json").read_text(), '"broken"') == 4
    assert "graph.json: line 4" in str(err) and "JSON syntax error" in str(err)
    assert memories(sqlite_engine) == {}  # nothing written

    report = import_paths(sqlite_engine, [DATA / "graph.json"], ACTOR, repository_id="order-service",
                          skip_invalid=True)
    assert [e.line for e in report.rejected] == [4] and len(report.imported) == 4
    events = by_statement(sqlite_engine, "Publishes invoice events")
    assert events.applies_to == ["billing-service"] and events.repository_id == "order-service"
    assert {"entity:billing-service", "entityType:service", "import:mcp", "line:1"} <= set(events.tags)
    assert events.import_source.endswith("graph.json#L1")
    ledger = by_statement(sqlite_engine, "append-only")
    for m in (events, ledger):  # the relation is evidence on both entities' candidates
        rel = [e for e in evidence_of(sqlite_engine, m.memory_id) if e.symbol]
        assert [(e.type, e.symbol, e.target, e.ref) for e in rel] == [
            ("ref", "billing-service", "ledger", "billing-service writes to ledger")]
    assert by_statement(sqlite_engine, "small pull requests").type == "user_preference"
    assert any("search-service" in w for w in report.warnings)
    again = import_paths(sqlite_engine, [DATA / "graph.json"], ACTOR, repository_id="order-service",
                         skip_invalid=True)
    assert again.imported == [] and len(again.unchanged) == 4 and again.withdrawn == []


def test_mcp_graph_dump_reimport_per_entity(sqlite_engine, tmp_path):
    graph = {"entities": [
        {"name": "billing-service", "entityType": "service",
         "observations": ["Publishes invoice events", "Owned by the payments team"]},
        {"name": "ledger", "entityType": "component", "observations": ["Entries are append-only"]}],
        "relations": []}
    path = tmp_path / "memory.json"
    path.write_text(json.dumps(graph, indent=2))
    assert detect_format(path) == "mcp"
    import_paths(sqlite_engine, [path], ACTOR)
    owned = by_statement(sqlite_engine, "payments team")
    ledger = by_statement(sqlite_engine, "append-only")
    graph["entities"][0]["observations"][1] = "Owned by the billing team"
    graph["entities"][1]["observations"] = []
    path.write_text(json.dumps(graph, indent=2))
    report = import_paths(sqlite_engine, [path], ACTOR)
    new = by_statement(sqlite_engine, "billing team")
    assert report.superseded == [(owned.memory_id, new.memory_id)]
    assert report.withdrawn == [ledger.memory_id]
    assert memories(sqlite_engine)[ledger.memory_id].state == "invalidated"
    path.write_text(json.dumps({"entities": [], "relations": []}))  # everything gone from the source
    emptied = import_paths(sqlite_engine, [path], ACTOR)
    assert sorted(emptied.withdrawn) == sorted([new.memory_id, by_statement(sqlite_engine, "invoice events").memory_id])


# -- Mem0 -------------------------------------------------------------------------------------------

def test_mem0_bare_list_history_and_expiry(engine):
    report = import_paths(engine, [DATA / "mem0_list.json"], ACTOR, repository_id="order-service")
    assert len(report.imported) == 2 and not report.rejected
    pg = by_statement(engine, "PostgreSQL 16")
    assert pg.expires_at == datetime(2027, 1, 31, tzinfo=UTC)
    assert pg.created_at == datetime(2026, 3, 1, 17, 0, tzinfo=UTC)
    assert (pg.state, pg.review_state, pg.origin) == ("candidate", "pending", "imported")
    assert {"mem0:0b7d4c1e-5a52-4e0f-9d0e-2f7b1a9c3d11", "user:dana", "meta:category=tech stack"} <= set(pg.tags)
    assert [(e.type, e.ref) for e in evidence_of(engine, pg.memory_id)] == [
        ("ref", "mem0:0b7d4c1e-5a52-4e0f-9d0e-2f7b1a9c3d11")]
    history = history_of(engine, pg.memory_id)
    assert [(h.from_state, h.to_state) for h in history] == [(None, "candidate"), ("candidate", "candidate"),
                                                             ("candidate", "candidate")]
    assert "2026-03-01T17:00:00" in history[1].reason and "ADD" in history[1].reason
    assert "2026-03-02T16:30:00" in history[2].reason and "PostgreSQL 15" in history[2].reason
    diffs = by_statement(engine, "diffs under 300 lines")
    assert diffs.type == "user_preference" and "agent:reviewer-bot" in diffs.tags and diffs.expires_at is None
    assert import_paths(engine, [DATA / "mem0_list.json"], ACTOR, repository_id="order-service").imported == []


def test_mem0_changed_memory_supersedes_with_same_logical_id(sqlite_engine, tmp_path):
    items = json.loads((DATA / "mem0_list.json").read_text())
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"results": items}))
    import_paths(sqlite_engine, [path], ACTOR)
    old = by_statement(sqlite_engine, "PostgreSQL 16")
    items[0]["memory"] = "The orders database runs PostgreSQL 17"
    path.write_text(json.dumps({"results": items}))
    report = import_paths(sqlite_engine, [path], ACTOR)
    new = by_statement(sqlite_engine, "PostgreSQL 17")
    assert report.superseded == [(old.memory_id, new.memory_id)] and report.withdrawn == []
    assert new.logical_memory_id == old.logical_memory_id != new.memory_id
    assert memories(sqlite_engine)[old.memory_id].state == "superseded"


def test_mem0_record_without_memory_names_its_line(sqlite_engine):
    with pytest.raises(ImportRefused) as exc:
        import_paths(sqlite_engine, [DATA / "mem0_results.json"], ACTOR)
    (err,) = exc.value.errors
    assert err.field == "memory" and err.line == line_no((DATA / "mem0_results.json").read_text(), '"hash": "00"')
    report = import_paths(sqlite_engine, [DATA / "mem0_results.json"], ACTOR, skip_invalid=True)
    ruff = by_statement(sqlite_engine, "ruff")
    assert len(report.imported) == 1 and ruff.type == "repo_convention" and "category:tooling" in ruff.tags


# -- Letta ------------------------------------------------------------------------------------------

def test_letta_double_encoded_af_and_block_over_limit(sqlite_engine):
    assert isinstance(json.loads((DATA / "agent_double.af").read_text()), str)  # the file is a JSON string
    report = import_paths(sqlite_engine, [DATA / "agent_double.af"], ACTOR, repository_id="order-service")
    assert not report.rejected and len(report.imported) == 5  # 3 bullets of "human", persona, conventions
    over = by_statement(sqlite_engine, "ad-hoc checks")
    assert over.requires_human_review and {"over_limit", "limit:60"} <= set(over.tags)
    assert over.type == "repo_convention" and "block:orders-helper/project_conventions" in over.tags
    assert any("over its limit" in w for w in report.warnings)
    name = by_statement(sqlite_engine, "Name: Dana")
    assert name.type == "user_preference" and not name.requires_human_review and "over_limit" not in name.tags
    assert by_statement(sqlite_engine, "careful assistant").type == "agent_persona"
    assert all(m.origin == "imported" and m.state == "candidate" for m in memories(sqlite_engine).values())
    assert import_paths(sqlite_engine, [DATA / "agent_double.af"], ACTOR,
                        repository_id="order-service").imported == []


def test_letta_old_schema_and_block_errors(sqlite_engine, tmp_path):
    doc = {"name": "helper", "core_memory": [
        {"label": "human", "value": "The user is Dana.", "limit": 2000},
        {"label": "notes", "value": "Deploys happen on Tuesdays.", "limit": "lots"}]}
    path = tmp_path / "helper.af"
    path.write_text(json.dumps(doc, indent=2))
    with pytest.raises(ImportRefused) as exc:
        import_paths(sqlite_engine, [path], ACTOR)
    (err,) = exc.value.errors
    assert err.field == "limit" and err.line == line_no(path.read_text(), '"limit": "lots"')
    report = import_paths(sqlite_engine, [path], ACTOR, skip_invalid=True)
    assert len(report.imported) == 1 and by_statement(sqlite_engine, "Dana").tags[:2] == [
        "agent:helper", "block:helper/human"]


# -- all formats ------------------------------------------------------------------------------------

def test_one_transaction_across_files_and_formats(sqlite_engine, tmp_path):
    native = tmp_path / "native.yaml"
    native.write_text("memories:\n  - memoryId: mem_native_1\n    type: code_fact\n    statement: Native works.\n"
                      "    scope: {repositoryId: order-service}\n")
    with pytest.raises(ImportRefused):
        import_paths(sqlite_engine, [native, DATA / "mem0_list.json", DATA / "graph.json"], ACTOR)
    assert memories(sqlite_engine) == {}
    report = import_paths(sqlite_engine, [native, DATA / "mem0_list.json", DATA / "graph.json"], ACTOR,
                          skip_invalid=True)
    assert "mem_native_1" in report.imported and len(report.imported) == 1 + 2 + 4
    assert report.formats[str(native)] == "native" and report.formats[str(DATA / "graph.json")] == "mcp"


def test_imported_candidates_are_never_auto_promoted(sqlite_engine):
    import_paths(sqlite_engine, [DATA / "mem0_list.json"], ACTOR, repository_id="order-service")
    pg = by_statement(sqlite_engine, "PostgreSQL 16")
    bot = Actor(type="agent", id="promoter-bot")
    with Session(sqlite_engine) as s, s.begin():
        with pytest.raises(InvariantViolation, match="promotion"):
            transition(s, pg.memory_id, "approved", bot, "auto-promote")

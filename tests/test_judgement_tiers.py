"""Two tiers of judgement (issue 20): only confident verdicts act, the rest are suggestions a reviewer
clears in bulk. Through the CLI on a real git checkout, the services on a real store, and the TUI."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.app import MemtuiApp
from memtui.cli import app as memtui_app
from memtui.clock import utcnow
from memtui.domain.invariants import Actor
from memtui.importers.native import import_files
from memtui.review.resolve import ResolveError, ResolveService
from memtui.screens.dialogs import ConfirmDialog
from memtui.similarity.subjects import relation
from memtui.store.models import Memory, MemoryConflict, ReviewDecision
from tests.gitrepo import git

CATALOGUE = """# Project

## Models
- **GPT-4.1 family**: gpt-4.1, gpt-4.1-mini – fast general models
- **GPT-5 family**: gpt-5, gpt-5-mini – reasoning models
- **Claude family**: claude-sonnet, claude-haiku – assistant models
- **Gemini family**: gemini-pro, gemini-flash – multimodal models
- **Llama family**: llama-3, llama-3.1 – open weights models

## Testing
- Run only unit tests: `pytest -k 'not _int'`
- Run only integration tests: `pytest -k '_int'`
- Never use `pytest -x`

## Layout
- Run the API server from `server/`
- Run the MCP server from `mcp_server/`
"""


def _cli(*args: str) -> dict | list | str:
    res = CliRunner().invoke(memtui_app, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def _checkout(tmp_path, files: dict[str, str]):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for name, text in files.items():
        (repo / name).write_text(text, encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "memory files")
    return repo


def _two_imports(tmp_path, monkeypatch, claude: str, agents: str) -> str:
    """A store with CLAUDE.md imported at one commit and AGENTS.md, written later, at the next: lines of
    different times, not siblings."""
    repo = _checkout(tmp_path, {"CLAUDE.md": claude})
    db = str(tmp_path / "m.db")
    monkeypatch.chdir(repo)
    _cli("import", "CLAUDE.md", "--repo", ".", "--db", db)
    (repo / "AGENTS.md").write_text(agents, encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "later")
    _cli("import", "AGENTS.md", "--repo", ".", "--db", db)
    return db


def _likely(db: str) -> list[dict]:
    return json.loads(_cli("conflicts", "--json", "--db", db))


def test_parallel_lines_of_one_file_open_no_likely_conflict_and_a_contradiction_across_files_does(tmp_path, monkeypatch):
    repo = _checkout(tmp_path, {"CLAUDE.md": CATALOGUE})
    db = str(tmp_path / "m.db")
    monkeypatch.chdir(repo)
    _cli("import", "CLAUDE.md", "--repo", ".", "--db", db)
    _cli("maintain", "--db", db)
    assert _likely(db) == []
    # a second file, written elsewhere, prescribes what the first forbids
    (repo / "AGENTS.md").write_text("# Agents\n\n- Run the tests with `pytest -x`\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "agents")
    _cli("import", "AGENTS.md", "--repo", ".", "--db", db)
    _cli("maintain", "--db", db)
    likely = _likely(db)
    assert len(likely) == 1
    from memtui.store.engine import open_store

    with Session(open_store(db)) as s:
        statements = sorted(s.get(Memory, m).statement for m in likely[0]["memories"])
        held_out = sorted(m.statement for m in s.exec(select(Memory).where(Memory.conflict_state == "open")))
    assert statements == ["Never use `pytest -x`", "Run the tests with `pytest -x`"]
    assert held_out == statements
    # possible ones are listed with both ids, a score and a reason, and hold nothing out of recall
    for c in json.loads(_cli("conflicts", "--json", "--possible", "--db", db)):
        assert c["tier"] == "possible" and len(c["memories"]) == 2 and 0 <= c["score"] <= 1 and c["reason"]


@pytest.mark.parametrize("a, b, expected", [
    ("GPT-4.1 family: gpt-4.1, gpt-4.1-mini – fast", "GPT-5 family: gpt-5, gpt-5-mini – reasoning", "different"),
    ("Run only unit tests: `pytest -k 'not _int'`", "Run only integration tests: `pytest -k '_int'`", "different"),
    ("Run the API server from `server/`", "Run the MCP server from `mcp_server/`", "different"),
    ("Evidence probe 3 checks the cache", "Evidence probe 7 checks the cache", "different"),
    ("Key directories: `server/` — the API", "Key directories: `mcp_server/` — the MCP server", "different"),
    ("Never use `pytest -x`", "Run the tests with `pytest -x`", "same"),
    ("Validation rules are registered through RuleRegistry.", "Validation rules are configured in OrderValidator.",
     "same"),
    ("The API timeout is 30 seconds", "The API timeout is 10 seconds", "same"),
])
def test_subject_relation(a, b, expected):
    assert relation(a, b) == expected
    assert relation(b, a) == expected


# -- bulk dismissal -------------------------------------------------------------------------------

LEAD = Actor("human", "lead-1", "lead")
REV = Actor("human", "reviewer-9", "reviewer")
N = 12


def _records() -> str:
    out = ["memories:"]
    for i in range(N):
        out += [f"  - memoryId: mem_{i:02d}", "    type: code_fact",
                f"    statement: \"Service {i} listens on port {8000 + i}.\"",
                "    scope: {tenantId: acme, repositoryId: os}", "    state: active", "    reviewState: approved",
                "    evidence:", "      - {type: human, ref: 'reviewed by hand', status: valid}"]
    return "\n".join(out) + "\n"


@pytest.fixture
def possible_store(engine, tmp_path):
    f = tmp_path / "r.yaml"
    f.write_text(_records())
    import_files(engine, [f], LEAD)
    now = utcnow()
    with Session(engine) as s, s.begin():
        for i in range(N - 1):
            s.add(MemoryConflict(conflict_id=f"memconf_p{i:02d}", severity="low", tenant_id="acme", repository_id="os",
                                 memory_a=f"mem_{i:02d}", memory_b=f"mem_{i + 1:02d}", status="possible",
                                 score=round(0.5 - i / 100, 2), reason=f"learned scorer P(conflict) 0.{50 - i}",
                                 created_at=now))
    return engine


def _statuses(engine) -> dict[str, str]:
    with Session(engine) as s:
        return {c.conflict_id: c.status for c in s.exec(select(MemoryConflict))}


def test_dismiss_conflicts_is_one_decision_and_one_undo(possible_store):
    svc = ResolveService(possible_store)
    ids = [f"memconf_p{i:02d}" for i in range(10)]
    r = svc.dismiss_conflicts(ids, REV, comment="parallel list items")
    after = _statuses(possible_store)
    assert [after[c] for c in ids] == ["not_a_conflict"] * 10 and after["memconf_p10"] == "possible"
    with Session(possible_store) as s:
        d = s.get(ReviewDecision, r.decision_id)
        assert (d.kind, d.payload["comment"], len(d.payload["status"])) == ("conflict_batch", "parallel list items", 10)
    svc.undo(r.decision_id, REV)
    assert set(_statuses(possible_store).values()) == {"possible"}


def test_a_bad_id_in_a_batch_writes_nothing(possible_store):
    with pytest.raises(ResolveError, match="memconf_nope"):
        ResolveService(possible_store).dismiss_conflicts(["memconf_p00", "memconf_nope"], REV)
    assert set(_statuses(possible_store).values()) == {"possible"}


def test_promote_opens_the_conflict_and_undo_makes_it_possible_again(possible_store):
    svc = ResolveService(possible_store)
    r = svc.promote_conflict("memconf_p03", REV)
    with Session(possible_store) as s:
        assert s.get(MemoryConflict, "memconf_p03").status == "open"
        assert (s.get(Memory, "mem_03").conflict_state, s.get(Memory, "mem_04").conflict_state) == ("open", "open")
        assert s.get(Memory, "mem_05").conflict_state == "none"
    svc.undo(r.decision_id, REV)
    with Session(possible_store) as s:
        assert s.get(MemoryConflict, "memconf_p03").status == "possible"
        assert s.get(Memory, "mem_03").conflict_state == "none"


def test_cli_dismisses_all_in_a_scope_matching_a_reason(possible_store, tmp_path):
    db = str(possible_store.url)
    out = _cli("not-a-conflict", "--all", "--scope", "acme/os", "--reason-contains", "P(conflict) 0.4", "--db", db)
    assert "10 conflict(s) dismissed" in out  # 0.49 ... 0.40 of the 11 (0.50 does not match)
    st = _statuses(possible_store)
    assert sorted(c for c, v in st.items() if v == "possible") == ["memconf_p00"]
    res = CliRunner().invoke(memtui_app, ["not-a-conflict", "--all", "--db", db])
    assert res.exit_code == 2 and "--scope" in res.output


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)  # the TUI path; the service on both stores above
async def test_ten_selected_possible_conflicts_dismissed_with_one_key_and_restored_with_u(possible_store):
    app = MemtuiApp(possible_store, REV)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("C")  # the conflicts screen
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("v")
        for _ in range(9):
            await pilot.press("j")
        await pilot.pause()
        assert "selected 10" in app.screen.sub_title
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        st = _statuses(possible_store)
        assert sum(v == "not_a_conflict" for v in st.values()) == 10
        with Session(possible_store) as s:
            assert len(list(s.exec(select(ReviewDecision).where(ReviewDecision.kind == "conflict_batch")))) == 1
        await pilot.press("u")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert set(_statuses(possible_store).values()) == {"possible"}


# -- the pluggable judge decides the uncertain band ---------------------------------------------

class _Judge(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = body["messages"][-1]["content"]
        verdict = "conflict" if "black" in text and "ruff" in text else "neither"
        answer = {"choices": [{"message": {"role": "assistant", "content": json.dumps(
            {"verdict": verdict, "reason": "both name the formatter"})}}]}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_the_judge_decides_an_uncertain_pair_and_says_so(tmp_path, monkeypatch):
    db = _two_imports(tmp_path, monkeypatch, "# A\n\n- Format Python code with black\n",
                      "# B\n\n- Format Python code with ruff format\n")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Judge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _cli("maintain", "--only", "conflicts", "--db", db)
    try:
        assert _likely(db) == []
        possible = json.loads(_cli("conflicts", "--json", "--possible", "--db", db))
        assert len(possible) == 1 and 0.2 <= possible[0]["score"] < 0.73
        _cli("maintain", "--only", "conflicts", "--db", db, "--judge", f"http://127.0.0.1:{server.server_port}",
             "--judge-model", "tiny")
    finally:
        server.shutdown()
    likely = _likely(db)
    assert len(likely) == 1 and likely[0]["reason"].startswith("judge tiny: both name the formatter")
    assert json.loads(_cli("conflicts", "--json", "--possible", "--db", db)) == []


# -- statements of imported lines -----------------------------------------------------------------

def test_statements_lose_markdown_syntax_and_nested_bullets_keep_their_parent(tmp_path, monkeypatch):
    repo = _checkout(tmp_path, {"CLAUDE.md": (
        "# Notes\n\n"
        "- **GPT-5 Family** (Reasoning models): `gpt-5` - *smallest* model, see [the guide](docs/models.md)\n"
        "- **Neo4j**: graph backend\n"
        "  - Requires version 5.26+\n"
        "- **FalkorDB**: alternative backend\n"
        "  - Requires version 5.26+\n"
        "- Match files with **/*.ts globs\n")})
    db = str(tmp_path / "m.db")
    monkeypatch.chdir(repo)
    _cli("import", "CLAUDE.md", "--repo", ".", "--db", db)
    from memtui.store.engine import open_store

    with Session(open_store(db)) as s:
        rows = {m.statement: m for m in s.exec(select(Memory))}
    assert set(rows) == {
        "GPT-5 Family (Reasoning models): `gpt-5` - smallest model, see the guide (docs/models.md)",
        "Neo4j: graph backend", "Neo4j: Requires version 5.26+",
        "FalkorDB: alternative backend", "FalkorDB: Requires version 5.26+",
        "Match files with **/*.ts globs"}
    # a catalogue line is a fact, never a task that expires by the task policy
    assert rows["GPT-5 Family (Reasoning models): `gpt-5` - smallest model, see the guide (docs/models.md)"].type \
        == "code_fact"


@pytest.mark.parametrize("line, expected", [
    ("Run the tests with `pytest -x`", "runbook"),
    ("Never commit `.env` files", "repo_convention"),
    ("Use snake_case for module names", "repo_convention"),
    ("You are a senior Rust engineer.", "agent_persona"),
    ("We chose SQLite instead of PostgreSQL because deployments are single-node", "architecture_decision"),
    ("Docker Support: Containerized deployment with Neo4j", "code_fact"),
    ("Claude 4.5 Family (Latest): `claude-haiku-4-5-latest` - Fast model", "code_fact"),
    ("TODO: migrate auth to v2", "task"),
    ("Keep fixtures minimal, one per model", "test_convention"),
    ("Gotcha: the async driver drops the connection on concurrent writes", "evaluation_lesson"),
])
def test_line_types(line, expected):
    from memtui.importers.line_types import type_for_line

    assert type_for_line(line, ["Notes"], []) == expected


def test_a_dismissed_pair_comes_back_once_a_statement_changes(tmp_path, monkeypatch):
    db = _two_imports(tmp_path, monkeypatch, "# A\n\n- Format Python code with black\n",
                      "# B\n\n- Format Python code with ruff format\n")
    _cli("maintain", "--only", "conflicts", "--db", db)
    [c] = json.loads(_cli("conflicts", "--json", "--possible", "--db", db))
    _cli("not-a-conflict", c["conflictId"], "--db", db)
    _cli("maintain", "--only", "conflicts", "--db", db)
    assert json.loads(_cli("conflicts", "--json", "--possible", "--db", db)) == []  # stays dismissed
    from memtui.store.engine import open_store

    engine = open_store(db)
    with Session(engine) as s, s.begin():  # the statement is edited (as an accepted edit would)
        m = s.get(Memory, c["memories"][0])
        m.statement = m.statement.replace("Python code", "all Python code")
        s.add(m)
    _cli("maintain", "--only", "conflicts", "--db", db)
    again = json.loads(_cli("conflicts", "--json", "--possible", "--db", db))
    assert [x["conflictId"] for x in again] == [c["conflictId"]]


def test_memory_files_of_one_commit_are_siblings_yet_an_explicit_never_still_conflicts(tmp_path, monkeypatch):
    repo = _checkout(tmp_path, {"CLAUDE.md": CATALOGUE + "- Format Python code with black\n",
                                "AGENTS.md": "# Agents\n\n- Run the tests with `pytest -x`\n"
                                             "- Format Python code with ruff format\n"})
    db = str(tmp_path / "m.db")
    monkeypatch.chdir(repo)
    _cli("import", "CLAUDE.md", "AGENTS.md", "--repo", ".", "--db", db)
    _cli("maintain", "--db", db)
    likely = _likely(db)
    assert len(likely) == 1 and "written together" in likely[0]["reason"]
    # black / ruff between lines written together is not even a suggestion
    assert all("black" not in c["reason"] for c in json.loads(_cli("conflicts", "--json", "--possible", "--db", db)))

"""Hostile input gets a clear error and nothing half-written (issue 9, item 5).

Each test is one finding of the issue: real files in tmp dirs, the real CLI (typer CliRunner),
real SQLite stores (and PostgreSQL where the store's behaviour matters), real git checkouts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from sqlmodel import Session, func, select
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.store.engine import open_store
from memtui.store.models import Evidence, Memory, StateHistory
from memtui import text as untrusted
from tests.gitrepo import git

SHA = "0123456789abcdef0123456789abcdef01234567"
HOSTILE = ["\x1b[31mred\x1b[0m", "\x1b]8;;http://evil\x07link\x1b]8;;\x07", "[bold red]x[/]"]
HOSTILE_STATEMENT = "Statement " + " and ".join(HOSTILE) + " end."
# what a reader must see: the text, no escape remnant, markup literally
SHOWN = "Statement red and link and [bold red]x[/] end."


def rec(mid: str, statement: str = "RuleRegistry is a singleton.", **extra) -> dict:
    return {"memoryId": mid, "type": "code_fact", "statement": statement,
            "scope": {"tenantId": "acme", "repositoryId": "order-service"}, **extra}


def active(mid: str, statement: str) -> dict:
    return rec(mid, statement, state="active", reviewState="approved", confidence=0.9,
               evidence=[{"type": "file_span", "path": "src/Main.java", "commitSha": SHA, "lines": [1, 3],
                          "status": "valid"}])


def run(db: Path, *args: str, env: dict | None = None):
    return CliRunner().invoke(memtui_app, ["--db", str(db), *args], env=env, catch_exceptions=False)


def counts(db: Path) -> tuple[int, int, int]:
    engine = open_store(str(db))
    try:
        with Session(engine) as s:
            return tuple(s.exec(select(func.count()).select_from(t)).one() for t in (Memory, Evidence, StateHistory))
    finally:
        engine.dispose()


def jsonl(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def refused(result, code: int = 1) -> str:
    """The CLI refused cleanly: the exit code, a message, no traceback."""
    out = result.output
    assert result.exit_code == code, out
    assert "Traceback" not in out and "IntegrityError" not in out
    assert len(out.splitlines()) < 12, out
    return out


# ---- 1. duplicate JSON keys ------------------------------------------------------------------------

def test_json_duplicate_key_is_refused_naming_file_line_and_key(tmp_path):
    path = tmp_path / "dup.json"
    path.write_text('[\n  {"memoryId": "m1", "type": "code_fact",\n   "statement": "one",\n'
                    '   "statement": "two", "scope": {"repositoryId": "r"}}\n]\n', encoding="utf-8")
    out = refused(run(tmp_path / "s.db", "import", str(path)))
    assert f"{path}: line 4" in out and "duplicate key 'statement' (first on line 3)" in out
    assert counts(tmp_path / "s.db") == (0, 0, 0)


def test_jsonl_duplicate_key_is_one_bad_record(tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps(rec("m1")) + "\n"
                    + '{"memoryId": "m2", "memoryId": "m3", "type": "code_fact", "statement": "x", "scope": {}}\n',
                    encoding="utf-8")
    out = refused(run(tmp_path / "s.db", "import", str(path)))
    assert f"{path}: line 2: record 2: duplicate key 'memoryId'" in out
    assert counts(tmp_path / "s.db") == (0, 0, 0)
    ok = run(tmp_path / "s.db", "import", "--skip-invalid", str(path))
    assert ok.exit_code == 0 and "imported 1" in ok.output and "line 2" in ok.output


# ---- 2. the same memoryId twice ------------------------------------------------------------------

def test_same_id_twice_in_one_file_names_both_lines(tmp_path):
    path = jsonl(tmp_path / "a.jsonl", rec("m1", "one"), rec("m1", "two"))
    out = refused(run(tmp_path / "s.db", "import", str(path)))
    assert f"{path}: line 2: record 2 (m1): field 'memoryId': duplicate id: {path}: line 1 (record 1)" in out
    assert counts(tmp_path / "s.db") == (0, 0, 0)
    skipped = run(tmp_path / "s.db", "import", "--skip-invalid", str(path))
    assert skipped.exit_code == 0, skipped.output
    assert "imported 1, already present 0, rejected 1" in skipped.output
    assert f"rejected: {path}: line 2: record 2 (m1)" in skipped.output
    engine = open_store(str(tmp_path / "s.db"))
    with Session(engine) as s:
        assert s.get(Memory, "m1").statement == "one"  # the first one, not the last
    engine.dispose()


def test_same_id_across_files_names_both_files(tmp_path):
    a = tmp_path / "a.yaml"
    a.write_text(yaml.safe_dump({"memories": [rec("other"), rec("m1", "one")]}), encoding="utf-8")
    b = jsonl(tmp_path / "b.jsonl", rec("m1", "two"))
    out = refused(run(tmp_path / "s.db", "import", str(a), str(b)))
    assert f"{b}: line 1: record 1 (m1)" in out and f"duplicate id: {a}: line" in out and "(record 2)" in out
    assert counts(tmp_path / "s.db") == (0, 0, 0)


def test_id_already_in_the_store_reimport_is_unchanged_a_different_record_is_refused(tmp_path):
    db = tmp_path / "s.db"
    first = jsonl(tmp_path / "a.jsonl", rec("m1", "one"))
    assert run(db, "import", str(first)).exit_code == 0
    again = run(db, "import", str(first))
    assert again.exit_code == 0 and "imported 0, already present 1, rejected 0" in again.output
    before = counts(db)
    other = jsonl(tmp_path / "b.jsonl", rec("m1", "a different statement"))
    out = refused(run(db, "import", str(other)))
    assert f"{other}: line 1: record 1 (m1): field 'memoryId': already in the store with different content" in out
    assert counts(db) == before
    skipped = run(db, "import", "--skip-invalid", str(other), str(jsonl(tmp_path / "c.jsonl", rec("m2"))))
    assert skipped.exit_code == 0 and "imported 1, already present 0, rejected 1" in skipped.output


# ---- 3. a broken JSON Lines line is one bad record ---------------------------------------------------

def test_invalid_utf8_line_is_one_bad_record(tmp_path):
    path = tmp_path / "u.jsonl"
    path.write_bytes(json.dumps(rec("m1")).encode() + b"\n"
                     + b'{"memoryId": "m2", "type": "code_fact", "statement": "\xff\xfe", "scope": {}}\n'
                     + b"{not json\n" + json.dumps(rec("m3")).encode() + b"\n")
    out = refused(run(tmp_path / "s.db", "import", str(path)))
    assert f"{path}: line 2: record 2: not UTF-8 text" in out
    assert f"{path}: line 3: record 3: JSON syntax error" in out
    assert counts(tmp_path / "s.db") == (0, 0, 0)
    ok = run(tmp_path / "s.db", "import", "--skip-invalid", str(path))
    assert ok.exit_code == 0, ok.output
    assert "imported 2, already present 0, rejected 2" in ok.output
    assert counts(tmp_path / "s.db")[0] == 2


# ---- 4. size limits ------------------------------------------------------------------------------

def test_a_one_megabyte_statement_is_refused(tmp_path):
    path = jsonl(tmp_path / "big.jsonl", rec("small"), rec("big", "x" * 1_000_000))
    out = refused(run(tmp_path / "s.db", "import", str(path)))
    assert (f"{path}: line 2: record 2 (big): field 'statement': the statement is 1000000 bytes; "
            "the limit is 4096 bytes") in out
    assert counts(tmp_path / "s.db") == (0, 0, 0)


def test_statement_limit_counts_utf8_bytes_and_is_configurable(tmp_path):
    db = tmp_path / "s.db"
    path = jsonl(tmp_path / "a.jsonl", rec("m1", "é" * 2049))  # 4098 bytes, 2049 characters
    refused(run(db, "import", str(path)))
    assert run(db, "import", "--max-statement-bytes", "4098", str(path)).exit_code == 0
    assert counts(db)[0] == 1
    path2 = jsonl(tmp_path / "b.jsonl", rec("m2", "y" * 5000))
    out = refused(run(db, "import", str(path2), env={"MEMTUI_MAX_STATEMENT_BYTES": "100"}))
    assert "the statement is 5000 bytes; the limit is 100 bytes" in out
    assert run(db, "import", str(path2), env={"MEMTUI_MAX_STATEMENT_BYTES": "6000"}).exit_code == 0
    usage = run(db, "import", "--max-statement-bytes", "0", str(path2))
    assert usage.exit_code == 2 and "--max-statement-bytes must be a positive number" in usage.output
    bad_env = run(db, "import", str(path2), env={"MEMTUI_MAX_FILE_BYTES": "lots"})
    assert bad_env.exit_code == 2 and "MEMTUI_MAX_FILE_BYTES" in bad_env.output


def test_excerpt_and_file_limits(tmp_path):
    db = tmp_path / "s.db"
    ev = [{"type": "file_span", "path": "src/A.java", "excerpt": "z" * (64 * 1024 + 1)}]
    path = jsonl(tmp_path / "a.jsonl", rec("m1", evidence=ev))
    out = refused(run(db, "import", str(path)))
    assert "field 'evidence[0].excerpt': the excerpt is 65537 bytes; the limit is 65536 bytes" in out
    small = jsonl(tmp_path / "b.jsonl", rec("m2"))
    size = small.stat().st_size
    out = refused(run(db, "import", "--max-file-bytes", str(size - 1), str(small)))
    assert f"{small}: the file is {size} bytes; the limit is {size - 1} bytes" in out
    assert counts(db) == (0, 0, 0)


def test_markdown_statement_over_the_limit_is_refused(tmp_path):
    repo = _repo(tmp_path, {"AGENTS.md": "# Rules\n\n- Use `src/A.java` for the " + "long " * 1000 + "rule.\n"
                                         "- Keep `src/A.java` small.\n", "src/A.java": "class A {}\n"})
    out = refused(run(tmp_path / "s.db", "import", str(repo / "AGENTS.md"), "--repo", str(repo)))
    assert "AGENTS.md: line 3: record 1: field 'statement': the statement is" in out
    assert counts(tmp_path / "s.db") == (0, 0, 0)
    ok = run(tmp_path / "s.db", "import", "--skip-invalid", str(repo / "AGENTS.md"), "--repo", str(repo))
    assert ok.exit_code == 0 and "imported 1" in ok.output


# ---- 5. Markdown never follows a symlink out of the repository ---------------------------------------

def _repo(tmp_path: Path, files: dict[str, str], name: str = "repo") -> Path:
    repo = tmp_path / name
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def _statements(db: Path) -> list[str]:
    engine = open_store(str(db))
    with Session(engine) as s:
        out = [m.statement for m in s.exec(select(Memory))] + [e.excerpt or "" for e in s.exec(select(Evidence))]
    engine.dispose()
    return out


def test_markdown_memory_file_that_is_a_symlink_out_of_the_repository_is_not_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("- The outside password is `hunter2` in `src/A.java`.\n", encoding="utf-8")
    repo = _repo(tmp_path, {"CLAUDE.md": "- Always run `make test` before `src/A.java` changes.\n",
                            "src/A.java": "class A {}\n"})
    (repo / "AGENTS.md").symlink_to(outside / "secret.md")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link")
    db = tmp_path / "s.db"
    out = refused(run(db, "import", str(repo), "--repo", str(repo)))
    assert f"{repo / 'AGENTS.md'}: is a symlink to {outside / 'secret.md'}, outside {repo}; not read" in out
    assert counts(db) == (0, 0, 0)
    # given by name, it is refused the same way
    refused(run(db, "import", str(repo / "AGENTS.md"), "--repo", str(repo)))
    ok = run(db, "import", "--skip-invalid", str(repo), "--repo", str(repo))
    assert ok.exit_code == 0 and "imported 1" in ok.output and "rejected 1" in ok.output
    assert not any("hunter2" in s for s in _statements(db))


def test_markdown_import_through_a_symlink_out_of_the_repository_is_not_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text("- The outside token is `hunter2` in `src/A.java`.\n", encoding="utf-8")
    repo = _repo(tmp_path, {"CLAUDE.md": "- Always run `make test` before `src/A.java` changes.\n"
                                         "- See @docs/notes.md for the notes.\n", "src/A.java": "class A {}\n"})
    (repo / "docs").mkdir()
    (repo / "docs" / "notes.md").symlink_to(outside / "notes.md")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link")
    db = tmp_path / "s.db"
    result = run(db, "import", str(repo / "CLAUDE.md"), "--repo", str(repo))
    assert result.exit_code == 0, result.output
    assert "import @docs/notes.md leaves" in result.output
    assert not any("hunter2" in s for s in _statements(db))


def test_markdown_folder_without_a_repository_does_not_follow_a_symlink_out_of_it(tmp_path):
    (tmp_path / "elsewhere.md").write_text("- The elsewhere secret is `hunter2` here.\n", encoding="utf-8")
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("- Run `make test` before every commit, always.\n", encoding="utf-8")
    (folder / "topic.md").symlink_to(tmp_path / "elsewhere.md")
    db = tmp_path / "s.db"
    out = refused(run(db, "import", str(folder)))
    assert f"{folder / 'topic.md'}: is a symlink to {tmp_path / 'elsewhere.md'}" in out
    assert not any("hunter2" in s for s in _statements(db))


# ---- 6. --repo must be a git checkout -----------------------------------------------------------------

def test_repo_that_is_not_a_git_checkout_is_a_usage_error(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "AGENTS.md").write_text("- Always run `make test` before commits.\n", encoding="utf-8")
    db = tmp_path / "s.db"
    out = refused(run(db, "import", str(folder / "AGENTS.md"), "--repo", str(folder)), code=2)
    assert f"{folder}: --repo is not a git checkout" in out
    assert counts(db) == (0, 0, 0)
    git(folder, "init", "-q", "-b", "main")  # a checkout without a commit: no commit to anchor evidence at
    out = refused(run(db, "import", str(folder / "AGENTS.md"), "--repo", str(folder)), code=2)
    assert "--repo has no commit yet" in out
    assert counts(db) == (0, 0, 0)


# ---- 7. control characters in actor names, ids and tags ----------------------------------------------

def test_control_problem_is_the_one_rule():
    control_problem = untrusted.control_problem
    assert control_problem("--actor", "ann") is None
    assert control_problem("--actor", "ann lee-é") is None
    assert control_problem("--actor", "a\x1b[31m") == "--actor holds a control character (\\x1b at position 2)"
    assert control_problem("the id", "a\nb") == "the id holds a control character (\\x0a at position 2)"
    assert control_problem("the tag", "\x00") is not None and control_problem("the tag", "x\x9b") is not None


@pytest.mark.parametrize("actor", ["mal\x1b[31mlory", "nul\x00l", "two\nlines", "c1\x9bx"])
def test_actor_with_control_characters_is_refused(tmp_path, actor):
    path = jsonl(tmp_path / "a.jsonl", rec("m1"))
    out = refused(run(tmp_path / "s.db", "--actor", actor, "import", str(path)), code=2)
    assert "--actor holds a control character" in out
    assert counts(tmp_path / "s.db") == (0, 0, 0)
    if "\x00" not in actor:  # an environment variable cannot hold NUL
        out = refused(run(tmp_path / "s.db", "import", str(path), env={"MEMTUI_ACTOR": actor}), code=2)
        assert "--actor holds a control character" in out


@pytest.mark.parametrize(("extra", "field"), [
    ({"tags": ["ok", "bad\x1b[2J"]}, "tags[1]"),
    ({"tags": ["new\nline"]}, "tags[0]"),
    ({"logicalMemoryId": "log\x00"}, "logicalMemoryId"),
    ({"supersededBy": "m\x07"}, "supersededBy"),
])
def test_ids_and_tags_with_control_characters_are_refused(tmp_path, extra, field):
    path = jsonl(tmp_path / "a.jsonl", rec("fine"), rec("m1", **extra))
    out = refused(run(tmp_path / "s.db", "import", str(path)))
    assert f"{path}: line 2: record 2 (m1): field '{field}':" in out and "holds a control character" in out
    assert counts(tmp_path / "s.db") == (0, 0, 0)


def test_memory_id_with_control_characters_is_refused(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps([rec("m\x1b[31m1"), rec("m\n2"), rec("m\x003")]), encoding="utf-8")
    out = refused(run(tmp_path / "s.db", "import", str(path)))
    assert out.count("field 'memoryId'") == 3
    assert "\x1b" not in out and "\x00" not in out
    assert counts(tmp_path / "s.db") == (0, 0, 0)


def test_mcp_entity_name_with_control_characters_is_refused(tmp_path):
    path = tmp_path / "graph.jsonl"
    path.write_text(json.dumps({"type": "entity", "name": "Bad\x1b[31mName", "entityType": "service",
                                "observations": ["Uses PostgreSQL for orders"]}) + "\n", encoding="utf-8")
    out = refused(run(tmp_path / "s.db", "import", str(path), "--repository-id", "r"))
    assert "holds a control character" in out and "\x1b" not in out
    assert counts(tmp_path / "s.db") == (0, 0, 0)


# ---- 8. every output shows untrusted text without its escape sequences -------------------------------

def test_visible_removes_whole_sequences_and_shows_other_controls():
    visible, visible_line = untrusted.visible, untrusted.visible_line
    assert visible(HOSTILE_STATEMENT) == SHOWN
    assert visible("a\x1bcb\x1b(Bc\x9b2Jd") == "abcd"  # two-byte escapes and 8-bit CSI
    assert visible("osc \x1b]0;title\x1b\\ st, dcs \x1bPq#0\x1b\\ done") == "osc  st, dcs  done"
    assert visible("cr\rbell\x07 lone \x1b") == "cr\\x0dbell\\x07 lone \\x1b"
    assert visible("keeps\nnewlines\tand tabs") == "keeps\nnewlines\tand tabs"
    assert visible_line("one\nline") == "one\\x0aline"
    assert visible(visible(HOSTILE_STATEMENT + "\x07")) == visible(HOSTILE_STATEMENT + "\x07")


def _no_escape(text: str) -> None:
    assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text
    assert "[31m" not in text and "[0m" not in text and "]8;;" not in text and "http://evil" not in text


def test_cli_outputs_show_hostile_statements_without_escape_remnants(tmp_path):
    db = tmp_path / "s.db"
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"memories": [active("mem_hostile", HOSTILE_STATEMENT)]}), encoding="utf-8")
    assert run(db, "import", str(path)).exit_code == 0
    shown = run(db, "show", "mem_hostile")
    assert shown.exit_code == 0 and f"statement:  {SHOWN}" in shown.output
    _no_escape(shown.output)
    assert run(db, "decide", "mem_hostile", "needs-review", "--comment", "why \x1b[31mred\x1b[0m").exit_code == 0
    hist = run(db, "history", "mem_hostile")
    assert hist.exit_code == 0 and "why red" in hist.output
    _no_escape(hist.output)
    assert run(db, "decide", "mem_hostile", "approve").exit_code == 0
    md = run(db, "export", "agents-md", "--scope", "repository:order-service")
    assert md.exit_code == 0 and f"- {SHOWN} (evidence: `src/Main.java`) <!-- memtui:mem_hostile -->" in md.output
    _no_escape(md.output)
    out_file = tmp_path / "AGENTS.md"
    assert run(db, "export", "agents-md", "--scope", "repository:order-service", "--out", str(out_file)).exit_code == 0
    _no_escape(out_file.read_text(encoding="utf-8"))
    rec_out = run(db, "recall", "Statement red link", "--scope", "repository:order-service", "--no-record")
    assert rec_out.exit_code == 0 and f"- {SHOWN}" in rec_out.output
    _no_escape(rec_out.output)


def test_maintenance_reports_carry_no_escape_sequence(tmp_path):
    db = tmp_path / "s.db"
    hostile = rec("mem_r", HOSTILE_STATEMENT)
    hostile["scope"]["repositoryId"] = "svc" + HOSTILE[0]  # a repository id is printed by the health report
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"memories": [hostile]}), encoding="utf-8")
    out = run(db, "import", str(path))  # issue 21 item 2: a key with control characters is not canonical
    assert out.exit_code == 1 and "field 'scope.repositoryId': a key holds control characters" in out.output
    hostile["scope"]["repositoryId"] = "svc"
    path.write_text(yaml.safe_dump({"memories": [hostile]}), encoding="utf-8")
    assert run(db, "import", str(path)).exit_code == 0
    import sqlalchemy as sa

    engine = open_store(str(db))
    with engine.begin() as conn:  # one written into the database: the reports still show it literally
        conn.execute(sa.update(Memory.__table__).values(repository_id="svc" + HOSTILE[0]))
    engine.dispose()
    reports = tmp_path / "reports"
    rep = run(db, "report", "--out", str(reports))
    assert rep.exit_code == 0, rep.output
    health = (reports / "memory-health-report.yaml").read_text(encoding="utf-8")
    assert "repositoryId: svcred" in health
    for f in reports.iterdir():
        _no_escape(f.read_text(encoding="utf-8"))
    h = run(db, "health")
    assert "svcred: 1 memories" in h.output
    _no_escape(h.output)


def test_library_exports_strip_sequences_without_the_cli(engine, tmp_path):
    from memtui.domain.invariants import Actor
    from memtui.recall import format_pack_markdown, recall
    from tests.gitrepo import import_anchored
    from memtui.reports.export import export_agents_md

    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"memories": [active("mem_hostile", HOSTILE_STATEMENT)]}), encoding="utf-8")
    import_anchored(engine, [path], Actor("human", "loader", "lead"), tmp_path)  # issue 21 item 3
    md = export_agents_md(engine, "repository:order-service")
    assert f"- {SHOWN} (evidence" in md
    _no_escape(md)
    pack = format_pack_markdown(recall(engine, "Statement red link", "repository:order-service", record=False))
    assert f"- {SHOWN}" in pack
    _no_escape(pack)


async def test_tui_shows_hostile_statements_literally(tmp_path):
    from memtui.widgets.queue_list import QueueList

    from memtui.app import MemtuiApp
    from memtui.domain.invariants import Actor
    from memtui.importers.native import import_files
    from memtui.widgets.memory_detail import MemoryDetail

    engine = open_store(str(tmp_path / "s.db"))
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"memories": [rec("mem_hostile", HOSTILE_STATEMENT, tags=["[red]t[/]"])]}),
                    encoding="utf-8")
    import_files(engine, [path], Actor("human", "loader", "lead"))
    app = MemtuiApp(engine, Actor("human", "reviewer-7", "reviewer"))
    async with app.run_test(size=(160, 40)) as pilot:
        for _ in range(5):
            await pilot.pause()
        table = app.screen.query_one("#queue", QueueList)
        assert table.cell(0, "statement") == SHOWN  # drawn as plain segments, never parsed as markup
        detail = app.screen.query_one("#detail", MemoryDetail)
        rendered = "\n".join(line.plain for line in detail.lines)
        assert SHOWN in rendered
        _no_escape(rendered)
    engine.dispose()


def test_json_outputs_stay_valid_json_with_c1_and_escape_characters(tmp_path):
    """A C1 control (here CSI, \\x9b) or ESC in a statement: `show --json`, `history --json`,
    `recall --json` and `export json` print valid JSON that carries the text exactly."""
    import json

    db = tmp_path / "s.db"
    statement = "Statement \x9b31m with C1 and \x1b[0m ESC."
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"memories": [active("mem_c1", statement)]}), encoding="utf-8")
    assert run(db, "import", str(path)).exit_code == 0
    shown = run(db, "show", "mem_c1", "--json")
    assert shown.exit_code == 0
    assert json.loads(shown.output)["statement"] == statement
    assert "\x9b" not in shown.output and "\x1b" not in shown.output
    assert json.loads(run(db, "history", "mem_c1", "--json").output)[0]["memoryId"] == "mem_c1"
    exported = run(db, "export", "json")
    assert exported.exit_code == 0
    assert [m["statement"] for m in json.loads(exported.output)["memories"]] == [statement]

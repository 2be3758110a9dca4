"""Issue 21 items 8 and 9, the transports' part: bidirectional and other invisible formatting controls
escaped in every output (CLI, agents-md, recall, the TUI), the HTTP API (duplicate JSON keys, the bind
rule of ``serve`` and its TLS, the access log, an agent's ``GET /memory/{id}``, harm reports), MCP errors
that name nothing outside the caller's scope, ``export json`` without token hashes and a pruning plan
inside the caller's scopes.

HTTP tests run a real ``memtui serve`` process on a free local port (as tests/test_api.py); MCP tests a
real client session against a real ``memtui mcp`` subprocess (as tests/test_mcp.py).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
import yaml
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.store.engine import open_store

from .conftest import FIXED_NOW

SHA = "0123456789abcdef0123456789abcdef01234567"
MEMTUI = str(Path(sys.executable).parent / "memtui")
#: A "Trojan Source" statement: a right-to-left override and an isolate reorder what a reader sees.
BIDI = "Always call \u202eterces\u202c the \u2066validator\u2069 first\u200b."
#: What a reader sees instead: every control as a visible code.
BIDI_SHOWN = "Always call \\u202eterces\\u202c the \\u2066validator\\u2069 first\\u200b."
BIDI_CHARS = ("\u202e", "\u202c", "\u2066", "\u2069", "\u200b")


def rec(mid: str, statement: str, *, repo: str = "order-service", tenant: str = "acme", **extra) -> dict:
    return {"memoryId": mid, "type": "code_fact", "statement": statement,
            "scope": {"tenantId": tenant, "repositoryId": repo}, **extra}


def active(mid: str, statement: str, **kw) -> dict:
    return rec(mid, statement, state="active", reviewState="approved", confidence=0.9,
               evidence=[{"type": "file_span", "path": "src/Main.java", "commitSha": SHA, "lines": [1, 3],
                          "status": "valid"}], **kw)


def run(db: Path | str, *args: str, env: dict | None = None):
    return CliRunner().invoke(memtui_app, ["--db", str(db), *args], env=env, catch_exceptions=False)


def ok(result) -> str:
    assert result.exit_code == 0, result.output
    return result.output


def _import(db: Path | str, tmp_path: Path, *records: dict, env: dict | None = None) -> None:
    path = tmp_path / f"m{len(list(tmp_path.glob('m*.yaml')))}.yaml"
    path.write_text(yaml.safe_dump({"memories": list(records)}), encoding="utf-8")
    ok(run(db, "import", str(path), env=env))


def _no_bidi(text: str) -> None:
    for ch in BIDI_CHARS:
        assert ch not in text, f"U+{ord(ch):04X} reached the output"


# ---- 11 / item 8: bidi controls never reach the terminal ----------------------------------------

def test_bidi_controls_are_shown_as_codes_by_show_history_recall_and_agents_md(tmp_path):
    db = tmp_path / "s.db"
    _import(db, tmp_path, active("mem_bidi", BIDI))
    shown = ok(run(db, "show", "mem_bidi"))
    assert f"statement:  {BIDI_SHOWN}" in shown
    _no_bidi(shown)
    ok(run(db, "decide", "mem_bidi", "needs-review", "--comment", "why \u202eevil\u202c"))
    hist = ok(run(db, "history", "mem_bidi"))
    assert "why \\u202eevil\\u202c" in hist
    _no_bidi(hist)
    ok(run(db, "decide", "mem_bidi", "approve"))
    md = ok(run(db, "export", "agents-md", "--scope", "repository:order-service"))
    assert f"- {BIDI_SHOWN} (evidence: `src/Main.java`) <!-- memtui:mem_bidi -->" in md
    _no_bidi(md)
    recalled = ok(run(db, "recall", "call the validator first", "--scope", "repository:order-service", "--no-record"))
    assert f"- {BIDI_SHOWN}" in recalled
    _no_bidi(recalled)
    # JSON keeps the text exactly, written as \\u escapes (valid JSON, no raw control on the terminal)
    as_json = ok(run(db, "show", "mem_bidi", "--json"))
    assert json.loads(as_json)["statement"] == BIDI
    _no_bidi(as_json)


def test_visible_escapes_format_characters_but_keeps_joiners_inside_words():
    from memtui.text import json_text, visible, visible_line

    assert visible("a\u2067b\u2068c\u200ed\u200fe\u061cf\ufeffg") == "a\\u2067b\\u2068c\\u200ed\\u200fe\\u061cf\\ufeffg"
    assert visible_line("tag\U000e0041") == "tag\\U000e0041"  # invisible tag characters ("ASCII smuggling")
    assert visible("Rule\u200dStore") == "Rule\\u200dStore"  # a joiner hiding inside an identifier
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert visible(family) == family  # between two emoji it only joins
    assert json.loads(json_text("x\U000e0041\u202e")) == "x\U000e0041\u202e"
    assert "\u202e" not in json_text("x\u202e")


async def test_tui_detail_and_queue_show_bidi_controls_as_codes(tmp_path):
    from memtui.app import MemtuiApp
    from memtui.domain.invariants import Actor
    from memtui.importers.native import import_files
    from memtui.widgets.memory_detail import MemoryDetail
    from memtui.widgets.queue_list import QueueList

    engine = open_store(str(tmp_path / "s.db"))
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"memories": [rec("mem_bidi", BIDI)]}), encoding="utf-8")
    import_files(engine, [path], Actor("human", "loader", "lead"))
    app = MemtuiApp(engine, Actor("human", "reviewer-7", "reviewer"))
    async with app.run_test(size=(200, 40)) as pilot:
        for _ in range(5):
            await pilot.pause()
        cell = app.screen.query_one("#queue", QueueList).cell(0, "statement")
        assert cell == BIDI_SHOWN
        rendered = "\n".join(line.plain for line in app.screen.query_one("#detail", MemoryDetail).lines)
        assert BIDI_SHOWN in rendered
        _no_bidi(rendered + cell)
    engine.dispose()

"""Start-up stays light: the TUI and CLI modules do not import scikit-learn, git or the parsers
(STYLE.md: keep them out of module scope in app.py and screens/)."""

from __future__ import annotations

import subprocess
import sys


def test_app_and_cli_import_no_heavy_libraries():
    code = ("import sys, memtui.app, memtui.cli, memtui.screens.queue, memtui.screens.duplicates, "
            "memtui.screens.conflicts, memtui.screens.compaction, memtui.screens.evidence, memtui.screens.health, "
            "memtui.keymap, memtui.palette, memtui.review.workstation; "
            "print(sorted(m for m in ('sklearn', 'git', 'tree_sitter', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


#: what the review queue never needs before its first row (issue 11, item 8); detect-secrets is needed:
#: every statement is shown redacted (invariant 5)
HEAVY = ("sklearn", "scipy", "numpy", "git", "rapidfuzz", "fastapi", "starlette", "uvicorn", "httpx", "mcp",
         "yaml", "alembic", "typer", "tree_sitter")

TUI_START = """
import asyncio, json, sys
from memtui.cli.launch import acting, open_engine, tui_args

args = tui_args(sys.argv[1:])
engine = open_engine(args["db"])
who = acting(engine, args.get("actor"), None)
from memtui.app import MemtuiApp

app = MemtuiApp(engine, who)

async def first_screen():
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            await pilot.pause(0.02)
            if type(app.screen).__name__ == "QueueScreen":
                break
        await pilot.pause(0.1)
        return type(app.screen).__name__

screen = asyncio.run(first_screen())
print(json.dumps([screen, sorted(m for m in HEAVY if m in sys.modules)]))
"""


def test_tui_start_path_imports_nothing_heavy(tmp_path):
    """`memtui --db STORE` up to the queue on screen, in a fresh process (the real entry: argument
    parsing, store opening, the acting reviewer, the app and its first screen): none of HEAVY is imported."""
    import json

    from memtui.domain.invariants import Actor
    from memtui.importers.native import import_files

    db = tmp_path / "store.db"
    src = tmp_path / "one.jsonl"
    src.write_text(json.dumps({"memoryId": "mem_start", "type": "code_fact", "statement": "Starts light.",
                               "scope": {"repositoryId": "r"}}) + "\n", encoding="utf-8")
    from memtui.store.engine import open_store

    engine = open_store(str(db))
    import_files(engine, [src], Actor("human", "loader", "lead"))
    engine.dispose()
    code = f"HEAVY = {HEAVY!r}\n" + TUI_START
    env = {**__import__("os").environ, "HOME": str(tmp_path), "MEMTUI_ACTOR": "reviewer-1"}
    out = subprocess.run([sys.executable, "-c", code, "--db", str(db)], capture_output=True, text=True,
                         check=True, env=env, cwd=tmp_path)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["QueueScreen", []]


def test_cli_commands_register_without_services():
    """`memtui.cli.app` (what `memtui lint`, `memtui import`... parse with) imports typer and no store,
    Textual or parser: each command imports what it uses when it runs."""
    code = ("import sys, memtui.cli; memtui.cli.app; "
            "print(sorted(m for m in ('sqlalchemy', 'sqlmodel', 'textual', 'yaml', 'alembic', 'pydantic') "
            "+ " + repr(HEAVY) + " if m in sys.modules and m != 'typer'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_tui_args_are_only_global_options():
    from memtui.cli.launch import tui_args

    assert tui_args([]) == {}
    assert tui_args(["--db", "x.db"]) == {"db": "x.db"}
    assert tui_args(["--db=x.db", "--actor", "ann", "--role=lead"]) == {"db": "x.db", "actor": "ann", "role": "lead"}
    for argv in (["lint"], ["--help"], ["--db"], ["--db", "--actor", "x"], ["--db", "a", "--db", "b"],
                 ["--db", "x.db", "queue"], ["--verbose"]):
        assert tui_args(argv) is None, argv


def test_tui_entry_fails_as_the_commands_do(tmp_path):
    """`memtui --db` a store that cannot be opened: the message and exit status every command gives."""
    out = subprocess.run([sys.executable, "-m", "memtui", "--db", str(tmp_path / "no" / "such" / "x.db")],
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stderr.strip() == f"memtui: cannot create store {tmp_path / 'no' / 'such' / 'x.db'}: folder " \
                                 f"{tmp_path / 'no' / 'such'} does not exist"
    bad = subprocess.run([sys.executable, "-m", "memtui", "--db", str(tmp_path / "s.db"), "--actor", "a\x1bb"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("memtui: --actor")


def test_shipped_head_is_alembics_head():
    """The store opens without alembic when it is at the head read from the migration files; that head
    is the one alembic computes."""
    from memtui.store.engine import head_revision, shipped_head

    assert shipped_head() == head_revision()


def test_the_tui_holds_no_engine_and_imports_no_store():
    """Issue 11, item 10: the app holds its services; app.py, screens/ and widgets/ never touch the
    engine, SQLAlchemy or the store (they reach services as ``app.services``)."""
    import ast
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "memtui"
    files = [src / "app.py", src / "palette.py", src / "keymap.py", *(src / "screens").glob("*.py"),
             *(src / "widgets").glob("*.py")]
    found = []
    for f in files:
        for node in ast.walk(ast.parse(f.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{f.name}: imports {n}" for n in names
                      if n.split(".")[0] in ("sqlalchemy", "sqlmodel") or n.startswith("memtui.store")]
            if isinstance(node, ast.Attribute) and node.attr in ("engine", "_engine"):
                found += [f"{f.name}:{node.lineno}: .{node.attr}"]
    assert found == []


#: what a light command never imports (issue 22, "Acceptance")
NOT_FOR_LIGHT_COMMANDS = ("sklearn", "wordllama", "textual", "alembic", "fastapi", "starlette", "uvicorn",
                          "mcp", "numpy", "scipy", "git", "tree_sitter")

LIGHT_COMMAND = """
import contextlib, io, json, sys
sys.argv = ["memtui", *sys.argv[1:]]
from memtui.cli import main
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        main()
    code = 0
except SystemExit as exc:
    code = exc.code
print(json.dumps([code, out.getvalue(), sorted(m for m in HEAVY if m in sys.modules)]))
"""


def test_show_and_decide_import_nothing_heavy(tmp_path):
    """`memtui show ID` and `memtui decide ID reject` in fresh processes (the cold path, as the first
    command of a session runs): they work and import none of NOT_FOR_LIGHT_COMMANDS; nor does the warm
    server's preload, from which every warm command's process is forked."""
    import json
    import os

    db = tmp_path / "store.db"
    src = tmp_path / "one.jsonl"
    src.write_text(json.dumps({"memoryId": "mem_light", "type": "code_fact", "statement": "Starts light.",
                               "scope": {"repositoryId": "r"}}) + "\n", encoding="utf-8")
    env = {**os.environ, "HOME": str(tmp_path), "MEMTUI_WARM": "0", "MEMTUI_DB": str(db), "LOGNAME": "rita",
           "USER": "rita"}
    subprocess.run([sys.executable, "-m", "memtui", "import", str(src)], env=env, cwd=tmp_path, check=True,
                   capture_output=True)
    code = f"HEAVY = {NOT_FOR_LIGHT_COMMANDS!r}\n" + LIGHT_COMMAND
    for args, shown in ((["show", "mem_light"], "Starts light."),
                        (["decide", "mem_light", "reject", "--comment", "checked"], "mem_light")):
        out = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=tmp_path, capture_output=True,
                             text=True, check=True)
        status, printed, heavy = json.loads(out.stdout.strip().splitlines()[-1])
        assert (status, heavy) == (0, []), (args, out.stderr)
        assert shown in printed
    preload = ("import sys; from memtui.cli.warm import _preload; _preload(); "
               f"print(sorted(m for m in {NOT_FOR_LIGHT_COMMANDS!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", preload], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

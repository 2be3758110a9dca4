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

"""Start-up stays light: the TUI and CLI modules do not import scikit-learn, git or the parsers
(STYLE.md: keep them out of module scope in app.py and screens/)."""

from __future__ import annotations

import subprocess
import sys


def test_app_and_cli_import_no_heavy_libraries():
    code = ("import sys, memtui.app, memtui.cli, memtui.screens.queue, memtui.screens.duplicates, "
            "memtui.screens.conflicts, memtui.screens.compaction, memtui.screens.evidence; "
            "print(sorted(m for m in ('sklearn', 'git', 'tree_sitter', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

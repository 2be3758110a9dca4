"""``memtui health`` in a folder without a store says so and how to make one; it creates no file
(issue 24, item 8)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MEMTUI = Path(sys.executable).parent / "memtui"


def test_health_in_an_empty_folder_creates_no_store(tmp_path):
    res = subprocess.run([str(MEMTUI), "health"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert f"no store at {tmp_path / 'memtui.db'}" in res.stderr
    assert "memtui import FILE" in res.stderr and "memtui demo" in res.stderr
    assert list(tmp_path.iterdir()) == []

"""`make test` on a machine without PostgreSQL (issue 22, item 7): outside CI everything else runs and
one line at the end says how many PostgreSQL tests were skipped and how to run them; in CI it fails."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NO_SERVER = "postgresql+psycopg://postgres@127.0.0.1:9/test"  # the discard port: nothing listens


def _suite(ci: bool):
    env = {**os.environ, "MEMTUI_TEST_PG": NO_SERVER}
    env.pop("CI", None)
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "tests/test_export.py", "-k", "test_agents_md_round_trip_gives_back_ids_and_statements"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_without_postgresql_the_rest_runs_and_one_line_says_what_was_skipped():
    run = _suite(ci=False)
    assert run.returncode == 0, run.stdout[-3000:]
    passed = int(re.search(r"(\d+) passed", run.stdout).group(1))
    skipped = int(re.search(r"(\d+) skipped", run.stdout).group(1))
    assert passed >= 1 and skipped >= 1
    lines = [line for line in run.stdout.splitlines() if "PostgreSQL tests skipped" in line]
    assert lines == [f"{skipped} PostgreSQL tests skipped: no server at {NO_SERVER}. To run them, start PostgreSQL "
                     "on 127.0.0.1:5432 (database test, user postgres, trust auth) or point MEMTUI_TEST_PG at one "
                     "(postgresql+psycopg://USER@HOST:PORT/DB), then run make test again."]


def test_in_ci_a_missing_postgresql_fails():
    run = _suite(ci=True)
    assert run.returncode == 1, run.stdout[-3000:]
    assert "PostgreSQL at " + NO_SERVER + " is required in CI and unreachable" in run.stdout
    assert "PostgreSQL tests skipped" not in run.stdout

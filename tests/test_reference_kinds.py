"""Every reference kind people write (issue 23, item 2), through the code ``memtui lint`` runs.

Each test builds a real git repository in a temp dir; expected commits and paths come from the test's
own git commands, never from the code under test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memtui.maintenance.lint import lint_files
from tests.gitrepo import GIT_ENV
from tests.test_revalidate_git import Repo

SRC = Path(__file__).resolve().parents[1] / "src"
ENV = {**GIT_ENV, "PYTHONPATH": str(SRC), "MEMTUI_WARM": "0", "MEMTUI_CACHE": "0", "LOGNAME": "lee", "USER": "lee"}


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("MEMTUI_CACHE", "0")


def _lint(r: Repo, name: str = "AGENTS.md"):
    return lint_files([r.path / name], r.path, cache=False)


def _java(pkg: str, cls: str, body: str = "") -> str:
    return f"package {pkg};\n\npublic class {cls} {{\n{body}}}\n"


# -- Java package names and fully qualified names ------------------------------------------------


def _renamed_package(tmp_path) -> tuple[Repo, str]:
    r = Repo(tmp_path / "r")
    for cls in ("Order", "OrderService"):
        r.write(f"src/main/java/com/acme/orders/{cls}.java", _java("com.acme.orders", cls))
    r.write("AGENTS.md", "# Orders\n\n- Package: `com.acme.orders`\n")
    r.commit("start")
    for cls in ("Order", "OrderService"):
        r.mv(f"src/main/java/com/acme/orders/{cls}.java", f"src/main/java/com/acme/ordering/{cls}.java")
        r.write(f"src/main/java/com/acme/ordering/{cls}.java", _java("com.acme.ordering", cls))
    return r, r.commit("rename the package")


def test_renamed_java_package_is_stale_naming_the_rename(tmp_path):
    r, rename = _renamed_package(tmp_path)
    found = _lint(r)
    assert [(f.line, f.kind, f.code, f.new_path) for f in found] == \
        [(3, "stale", "symbol_renamed", "com.acme.ordering")]
    assert "com.acme.orders" in found[0].message and "com.acme.ordering" in found[0].message
    assert rename[:7] in found[0].message


def test_renamed_java_package_through_the_command_line(tmp_path):
    """The acceptance line of issue 23: ``memtui lint AGENTS.md --repo .`` flags it and exits 1."""
    r, _ = _renamed_package(tmp_path)
    res = subprocess.run([sys.executable, "-m", "memtui", "lint", "AGENTS.md", "--repo", "."], cwd=r.path,
                         capture_output=True, text=True, env=ENV)
    assert res.returncode == 1, res.stderr
    assert "AGENTS.md:3:" in res.stdout and "renamed to com.acme.ordering" in res.stdout


def test_existing_java_package_and_qualified_method_are_valid(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/main/java/com/acme/util/Assert.java",
            _java("com.acme.util", "Assert", "  public static void checkNotNull(Object o) {}\n"))
    r.write("AGENTS.md", "# Util\n\n- Package: `com.acme.util`\n"
                         "- Guard with `com.acme.util.Assert.checkNotNull()`.\n")
    r.commit("start")
    r.write("README.md", "later\n")
    r.commit("later")
    assert _lint(r) == []


def test_deleted_java_method_named_by_its_qualified_name_is_stale(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/main/java/com/acme/util/Assert.java",
            _java("com.acme.util", "Assert", "  public static void checkNotNull(Object o) {}\n"))
    r.write("AGENTS.md", "# Util\n\n- Guard with `com.acme.util.Assert.checkNotNull()`.\n")
    r.commit("start")
    r.write("src/main/java/com/acme/util/Assert.java", _java("com.acme.util", "Assert"))
    r.commit("drop checkNotNull")
    assert [(f.line, f.kind) for f in _lint(r)] == [(3, "stale")]

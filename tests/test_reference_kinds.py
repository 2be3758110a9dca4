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
    place = "  public boolean place() {\n    return true;\n  }\n"
    for cls in ("Order", "OrderService"):
        r.write(f"src/main/java/com/acme/orders/{cls}.java", _java("com.acme.orders", cls, place))
    r.write("AGENTS.md", "# Orders\n\n- Package: `com.acme.orders`\n"
                         "- Entry: `com.acme.orders.OrderService.place()`\n")
    r.commit("start")
    for cls in ("Order", "OrderService"):
        r.mv(f"src/main/java/com/acme/orders/{cls}.java", f"src/main/java/com/acme/ordering/{cls}.java")
        r.write(f"src/main/java/com/acme/ordering/{cls}.java", _java("com.acme.ordering", cls, place))
    return r, r.commit("rename the package")


def test_renamed_java_package_is_stale_naming_the_rename(tmp_path):
    r, rename = _renamed_package(tmp_path)
    found = _lint(r)
    assert [(f.line, f.kind, f.code, f.new_path) for f in found] == \
        [(3, "stale", "symbol_renamed", "com.acme.ordering"),
         (4, "stale", "symbol_renamed", "com.acme.ordering.OrderService.place()")]
    assert "com.acme.orders" in found[0].message and "com.acme.ordering" in found[0].message
    assert rename[:7] in found[0].message and rename[:7] in found[1].message


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


def test_renamed_kotlin_package_is_stale_naming_the_rename(tmp_path):
    r = Repo(tmp_path / "r")
    kt = "package {pkg}\n\nclass OrderService {{\n    fun place(): Boolean {{\n        return true\n    }}\n}}\n"
    r.write("src/main/kotlin/com/acme/orders/OrderService.kt", kt.format(pkg="com.acme.orders"))
    r.write("AGENTS.md", "# Orders\n\n- Package: `com.acme.orders`\n- Entry: `com.acme.orders.OrderService.place()`\n")
    r.commit("start")
    r.mv("src/main/kotlin/com/acme/orders/OrderService.kt", "src/main/kotlin/com/acme/ordering/OrderService.kt")
    r.write("src/main/kotlin/com/acme/ordering/OrderService.kt", kt.format(pkg="com.acme.ordering"))
    rename = r.commit("rename the package")
    found = _lint(r)
    assert [(f.line, f.kind, f.code, f.new_path) for f in found] == \
        [(3, "stale", "symbol_renamed", "com.acme.ordering"),
         (4, "stale", "symbol_renamed", "com.acme.ordering.OrderService.place()")]
    assert rename[:7] in found[0].message and rename[:7] in found[1].message


def test_renamed_csharp_namespace_is_stale_naming_the_rename(tmp_path):
    r = Repo(tmp_path / "r")
    cs = ("namespace {ns}\n{{\n    public class OrderService\n    {{\n        public bool Place()\n        {{\n"
          "            return true;\n        }}\n    }}\n}}\n")
    r.write("src/Acme.Orders/OrderService.cs", cs.format(ns="Acme.Orders"))
    r.write("AGENTS.md", "# Orders\n\n- Namespace: `Acme.Orders`\n- Entry: `Acme.Orders.OrderService.Place()`\n"
                         "- Service: `OrderService.Place()`\n")
    r.commit("start")
    r.mv("src/Acme.Orders/OrderService.cs", "src/Acme.Ordering/OrderService.cs")
    r.write("src/Acme.Ordering/OrderService.cs", cs.format(ns="Acme.Ordering"))
    rename = r.commit("rename the namespace")
    found = _lint(r)
    assert [(f.line, f.kind, f.code, f.new_path) for f in found] == \
        [(3, "stale", "symbol_renamed", "Acme.Ordering"),
         (4, "stale", "symbol_renamed", "Acme.Ordering.OrderService.Place()")]
    assert rename[:7] in found[0].message


# -- things outside the repository: no notice, no flag ---------------------------------------------


def test_home_system_urls_images_refs_and_issues_are_not_repository_references(tmp_path):
    """Each line names something outside the repository; the repository holds ``src/lib/hooks/``
    (moved later), which a home-directory path ending in ``hooks/`` must not be taken for."""
    r = Repo(tmp_path / "r")
    r.write("src/lib/hooks/pre.py", "def pre():\n    pass\n")
    r.write("AGENTS.md", "# Setup\n\n"
            "- Hooks live in `~/.config/tool/hooks/` and `$HOME/.tool/hooks/`.\n"
            "- System config: `/etc/tool/hooks.conf`.\n"
            "- Docs: `https://example.com/src/lib/hooks/`.\n"
            "- Images: `python:3.11-slim`, `ghcr.io/acme/tool:latest`, `bitnami/redis:7.2`.\n"
            "- Compare `origin/main` with `refs/heads/release` and `main..topic`.\n"
            "- Fixed in `acme/tool#123`.\n")
    r.commit("start")
    r.mv("src/lib/hooks/pre.py", "src/hooks/pre.py")
    r.commit("move hooks")
    assert _lint(r) == []


def test_credentials_are_not_repository_references(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/app.py", "def main():\n    pass\n")
    r.write("AGENTS.md", "# Local setup\n\n- The test token is `ghp_exampleexampleexample0000`.\n"
                         "- The dev database is `admin:devpass@db.local`; AWS key `AKIAEXAMPLEEXAMPLE00`.\n")
    r.commit("start")
    r.write("src/app.py", "def main():\n    return 1\n")
    r.commit("later")
    assert _lint(r) == []


def test_a_repository_path_written_from_the_root_is_still_checked(tmp_path):
    """``/etc/app.conf`` names the repository's ``etc/app.conf`` when that existed: its move is stale."""
    r = Repo(tmp_path / "r")
    r.write("etc/app.conf", "a = 1\n")
    r.write("AGENTS.md", "# Config\n\n- Settings: `/etc/app.conf`.\n")
    r.commit("start")
    r.mv("etc/app.conf", "config/app.conf")
    r.commit("move config")
    assert [(f.line, f.kind, f.new_path) for f in _lint(r)] == [(3, "stale", "config/app.conf")]


# -- lists of names in one code span ---------------------------------------------------------------


_WIZARD = "package ui\n\ntype WizardField struct {\n\tName string\n}\n\ntype {result} struct {\n\tOK bool\n}\n"


@pytest.mark.parametrize("span", ["ui.WizardField / WizardResult", "WizardField, WizardResult"])
def test_each_name_of_a_list_in_one_code_span_is_a_reference(tmp_path, span):
    """Both names are references: the renamed one is stale (naming the new name), the other is not."""
    r = Repo(tmp_path / "r")
    r.write("go.mod", "module example.com/w\n\ngo 1.21\n")
    r.write("ui/wizard.go", _WIZARD.replace("{result}", "WizardResult"))
    r.write("AGENTS.md", f"# UI\n\n- The wizard returns `{span}`.\n")
    r.commit("start")
    r.write("ui/wizard.go", _WIZARD.replace("{result}", "WizardOutcome"))
    rename = r.commit("rename the result")
    found = _lint(r)
    assert [(f.line, f.kind, f.reference, f.new_path) for f in found] == \
        [(3, "stale", "WizardResult", "WizardOutcome")]
    assert rename[:7] in found[0].message
    r.write("ui/wizard.go", "package ui\n\ntype WizardOutcome struct {\n\tOK bool\n}\n")
    r.commit("drop the field")  # the first name of the list is checked as well
    assert sorted((f.reference, f.kind) for f in _lint(r)) == \
        sorted([(span.split(" / ")[0].split(",")[0].strip(), "stale"), ("WizardResult", "stale")])


# -- examples and plain words ----------------------------------------------------------------------


def test_a_real_path_after_eg_is_a_reference_and_a_made_up_one_an_example(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/lib/run.py", "def run():\n    pass\n")
    r.write("AGENTS.md", "# Runners\n\n- Put runners in a module, e.g. `src/lib/run.py`.\n"
                         "- Name handlers after their event, e.g. `my_handler.py`.\n")
    r.commit("start")
    r.mv("src/lib/run.py", "src/runner/run.py")
    move = r.commit("move the runner")
    found = _lint(r)
    assert [(f.line, f.kind, f.code, f.new_path) for f in found] == [(3, "stale", "path_moved", "src/runner/run.py")]
    assert move[:7] in found[0].message


def test_a_word_in_a_shell_comment_is_not_the_folder_of_that_name(tmp_path):
    """``# runs the tests`` is prose; ``pytest tests/`` names the folder (flagged once it moved)."""
    from memtui.maintenance.lint import _mentions, _parse

    r = Repo(tmp_path / "r")
    r.write("tests/test_a.py", "def test_a():\n    pass\n")
    r.write("AGENTS.md", "# Tests\n\n- Run `pytest -q  # runs the tests` before pushing.\n"
                         "- Or `pytest tests/ -x`.\n")
    start = r.commit("start")
    written = {key[1:] for key in _mentions(_parse([r.path / "AGENTS.md"], r.path, start), r.path)}
    assert written == {(4, "tests/")}
    r.mv("tests/test_a.py", "spec/test_a.py")
    r.commit("tests become spec")
    assert [(f.line, f.reference, f.new_path) for f in _lint(r)] == [(4, "tests/", "spec")]

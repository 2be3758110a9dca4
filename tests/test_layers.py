"""Layers (DESIGN.md): the command line, the TUI's screens and widgets reach git only through services
(issue 23, item 6: ``memtui repo add`` and ``import --repo`` check the checkout through
:func:`memtui.maintenance.repositories.register_checkout`)."""

from __future__ import annotations

import ast
from pathlib import Path

from typer.testing import CliRunner

from tests.test_revalidate_git import Repo

SRC = Path(__file__).resolve().parents[1] / "src" / "memtui"


def _imports(path: Path) -> set[str]:
    """Every module a file imports (``import a.b`` and ``from a.b import c``, at any depth)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def test_the_cli_and_the_tui_import_nothing_from_sources():
    files = [*SRC.glob("cli/*.py"), *SRC.glob("screens/*.py"), *SRC.glob("widgets/*.py"), SRC / "app.py"]
    assert len(files) > 20
    reaching = {f"{p.relative_to(SRC)}: {m}" for p in files for m in _imports(p)
                if m == "memtui.sources" or m.startswith("memtui.sources.") or m in ("git", "gitdb")}
    assert reaching == set()


def test_repo_add_checks_the_checkout_through_the_service(tmp_path):
    from memtui.cli import app
    from memtui.maintenance.repositories import list_repositories
    from memtui.store.engine import open_store

    db = str(tmp_path / "store.db")
    plain = tmp_path / "plain"
    plain.mkdir()
    env = {"LOGNAME": "lee", "USER": "lee"}
    refused = CliRunner().invoke(app, ["repo", "add", "shop", str(plain), "--db", db], env=env)
    assert refused.exit_code == 1 and f"{plain}: not a git checkout" in refused.stderr
    r = Repo(tmp_path / "r")
    r.write("a.py", "A = 1\n")
    r.commit("start")
    added = CliRunner().invoke(app, ["repo", "add", "shop", str(r.path), "--db", db], env=env)
    assert added.exit_code == 0, added.output
    engine = open_store(db)
    try:
        assert list_repositories(engine) == [("shop", "default", str(r.path.resolve()))]
    finally:
        engine.dispose()

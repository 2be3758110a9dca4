"""memtui in pre-commit and CI (issue 23, item 5): the repository's ``.pre-commit-hooks.yaml`` run through
pre-commit itself (``pre-commit try-repo`` against temporary repositories, offline: the hooks run the
installed memtui, nothing is downloaded), and the GitHub Actions step README.md documents."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.gitrepo import GIT_ENV, git
from tests.test_revalidate_git import Repo

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / ".pre-commit-hooks.yaml"
BIN = Path(sys.executable).parent  # the venv's scripts: memtui and pre-commit
DEAD = "http://127.0.0.1:9"  # a proxy nobody listens on: any download attempt fails at once
AGENTS = "# Billing\n\n- Refunds are issued in `src/billing/refund.py` only.\n"


@pytest.fixture
def env(tmp_path) -> dict:
    """Offline: every proxy dead, pip without an index, pre-commit's cache in the test's folder."""
    return {**GIT_ENV, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "MEMTUI_WARM": "0",
            "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "PIP_NO_INDEX": "1",
            **{k: DEAD for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY")}}


def pre_commit(*args: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True)


def stale_repo(path: Path, more: dict[str, str] | None = None) -> tuple[Repo, str]:
    """A repository whose AGENTS.md (and the files ``more`` gives: path -> text) names
    src/billing/refund.py, moved by a later commit (returned)."""
    r = Repo(path)
    r.write("src/billing/refund.py", "def refund():\n    return 1\n")
    r.write("AGENTS.md", AGENTS)
    for name, text in (more or {}).items():
        r.write(name, text)
    r.commit("start")
    r.mv("src/billing/refund.py", "src/payments/refund.py")
    return r, r.commit("move refund")


def test_try_repo_lint_fails_on_a_stale_agents_md_and_prints_the_line(tmp_path, env):
    """The acceptance line: ``pre-commit try-repo . memtui-lint --files AGENTS.md`` in a temporary
    repository (holding memtui's hook manifest) with a stale AGENTS.md."""
    r, move = stale_repo(tmp_path / "r")
    r.write(".pre-commit-hooks.yaml", MANIFEST.read_text())
    r.commit("the hooks")
    out = pre_commit("try-repo", ".", "memtui-lint", "--files", "AGENTS.md", cwd=r.path, env=env)
    assert out.returncode == 1, out.stdout + out.stderr
    assert re.search(r"^memtui lint\.+Failed$", out.stdout, re.M)
    assert (f"AGENTS.md:3:26: stale: src/billing/refund.py was moved to src/payments/refund.py in {move[:7]}"
            in out.stdout.splitlines())
    assert r.read("AGENTS.md") == AGENTS  # lint writes nothing


def test_fix_hook_rewrites_memory_files_only_then_lint_hook_passes(tmp_path, env):
    hooks = Repo(tmp_path / "hooks")  # memtui's manifest in a repository of its own, as a user's config names it
    hooks.write(".pre-commit-hooks.yaml", MANIFEST.read_text())
    hooks.commit("hooks")
    r, _move = stale_repo(tmp_path / "r", {".github/copilot-instructions.md": "- Refunds: `src/billing/refund.py`.\n",
                                           "README.md": "Refunds used to live in `src/billing/refund.py`.\n"})
    fix = pre_commit("try-repo", str(hooks.path), "memtui-fix", "--all-files", cwd=r.path, env=env)
    assert fix.returncode == 1, fix.stdout + fix.stderr
    assert "- files were modified by this hook" in fix.stdout
    assert r.read("AGENTS.md") == AGENTS.replace("src/billing/", "src/payments/")
    assert r.read(".github/copilot-instructions.md") == "- Refunds: `src/payments/refund.py`.\n"
    assert r.read("README.md") == "Refunds used to live in `src/billing/refund.py`.\n"
    lint = pre_commit("try-repo", str(hooks.path), "memtui-lint", "--all-files", cwd=r.path, env=env)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert re.search(r"^memtui lint\.+Passed$", lint.stdout, re.M)


def test_the_hooks_see_the_memory_files_import_reads():
    hooks = {h["id"]: h for h in yaml.safe_load(MANIFEST.read_text())}
    assert set(hooks) == {"memtui-lint", "memtui-fix"}
    assert hooks["memtui-lint"]["files"] == hooks["memtui-fix"]["files"]
    assert {h["language"] for h in hooks.values()} == {"unsupported"}  # the installed memtui: offline
    pattern = re.compile(hooks["memtui-lint"]["files"])
    memory = ["AGENTS.md", "docs/api/AGENTS.md", "CLAUDE.md", "claude.local.md", "GEMINI.md", "AGENTS.override.md",
              ".github/copilot-instructions.md", ".github/instructions/python.instructions.md",
              ".cursor/rules/style.mdc", ".claude/rules/testing.md", ".cursorrules", ".windsurfrules",
              ".clinerules", ".clinerules/conventions.md", "memory-bank/activeContext.md"]
    other = ["README.md", "docs/agents.py", "NOTAGENTS.md", "CLAUDE.md.bak", ".cursor/settings.json",
             "src/memory.py", "docs/AGENTS.txt"]
    assert [n for n in memory if not pattern.search(n)] == []
    assert [n for n in other if pattern.search(n)] == []


def _actions_step() -> tuple[str, str]:
    """(the ``env`` BASE expression, the ``run`` script) of README.md's documented GitHub Actions step."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    steps = [s for b in blocks if "memtui lint --format github" in b for s in yaml.safe_load(b)]
    (step,) = [s for s in steps if isinstance(s, dict) and "memtui lint --format github" in s.get("run", "")]
    return step["env"]["BASE"], step["run"]


def test_the_documented_github_actions_step_annotates_changed_memory_files(tmp_path, env):
    base_expr, script = _actions_step()
    assert base_expr == "${{ github.event.pull_request.base.sha || github.event.before }}"
    claude = "- Refunds: `src/billing/refund.py`.\n"
    r, base = stale_repo(tmp_path / "r", {"docs/CLAUDE.md": claude, "src/notes.md": claude})
    r.write("src/other.py", "X = 1\n")  # a change that touches no memory file
    r.commit("other")
    quiet = subprocess.run(["bash", "-e", "-c", script], cwd=r.path, env={**env, "BASE": base},
                           capture_output=True, text=True)
    assert (quiet.returncode, quiet.stdout) == (0, ""), quiet.stderr
    r.write("AGENTS.md", AGENTS + "- Tests live in `tests/`.\n")  # changed files whose old lines are stale
    r.write("docs/CLAUDE.md", claude + "- Charges: ask the billing team.\n")
    r.write("src/notes.md", claude + "- not a memory file\n")
    r.write("tests/test_x.py", "def test_x():\n    pass\n")
    r.commit("edit the memory files")
    out = subprocess.run(["bash", "-e", "-c", script], cwd=r.path, env={**env, "BASE": base},
                         capture_output=True, text=True)
    assert out.returncode != 0  # the step fails
    lines = out.stdout.splitlines()
    assert [ln.split("::")[1] for ln in lines] == ["error file=AGENTS.md,line=3,col=26",
                                                   "error file=docs/CLAUDE.md,line=1,col=13"]
    assert all("stale: src/billing/refund.py was moved to src/payments/refund.py" in ln for ln in lines)

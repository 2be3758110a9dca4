"""References a Markdown memory line names become evidence (paths, folders, globs, symbols, links).

Each test builds a real git repository in tmp_path with a memory file and the source files it names,
imports it through the parser the CLI uses (``parse_markdown`` with the pipeline's context), and
compares the evidence with dictionaries worked out by hand.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memtui.importers.markdown import parse_markdown
from memtui.importers.pipeline import _context

from tests.gitrepo import git as _git


def git(cwd: Path, *args: str) -> str:
    return _git(cwd, *args).strip()


def make_repo(root: Path, files: dict[str, str]) -> str:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-gpg-sign", "-m", "initial")
    return git(root, "rev-parse", "HEAD")


def parse(root: Path, rel: str = "AGENTS.md"):
    path = root / rel
    return parse_markdown([path], _context([path], None, None, True))


def refs_of(parsed, fragment: str) -> list[dict]:
    """The reference evidence (all but the memory's own span) of the one item whose statement holds ``fragment``."""
    found = [it for it in parsed.items if fragment in it.statement]
    assert len(found) == 1, (fragment, [it.statement for it in parsed.items])
    return found[0].evidence[1:]


def parsed_repo(root: Path, lines: list[str], files: dict[str, str], rel: str = "AGENTS.md"):
    """(parsed, head): a repository holding ``files`` and the memory file ``rel`` made of ``lines``."""
    head = make_repo(root, {rel: "# T\n\n" + "".join(lines), **files})
    return parse(root, rel), head


def item(parsed, fragment: str):
    (it,) = [it for it in parsed.items if fragment in it.statement]
    return it


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


RUNNER = "class JobRunner:\n    def run(self):\n        return 1\n"
SESSION = "class Db:\n    def session(self):\n        return None\n"

AGENTS = """\
# Project

Key directories:

- `src/api/` — HTTP handlers
- `src/app/__init__.py` makes **app** a package; snapshots live in `__snapshots__/`

| Path | Purpose |
|---|---|
| src/app/ | the application |
| ├─jobs/ | JobRunner |

```text
src/
├── api/
│   └── routes/
│       └── main.py   # entry point
└── missing.py
```

### API (`src/api`)

- Routes live in `routes/main.py`.

## Notes

- Handlers are registered in `handlers/registry.py`.
- Release from the `2.x` branch; Rust settings are in `Cargo.toml`; use `self.session()` per request.
- Snapshots match `pkg/**/*.snap`.
- Name handlers after their route (e.g. `my_handler.py`).
- See [the guide](docs/guide.md) and [[Beta]].
- The old exporter was `tools/export.py`.
- It is a small service written with care and love.

```bash
make test
```
"""


@pytest.fixture
def repo(tmp_path) -> tuple[Path, str]:
    root = tmp_path / "shop"
    head = make_repo(root, {
        "AGENTS.md": AGENTS,
        "src/api/routes/main.py": "def main():\n    return 0\n",
        "src/app/__init__.py": "",
        "src/app/jobs/runner.py": RUNNER,
        "src/app/db.py": SESSION,
        "src/app/__snapshots__/a.snap": "x\n",
        "plugins/web/handlers/registry.py": "REGISTRY = {}\n",
        "pkg/ui/__snapshots__/b.snap": "y\n",
        "Cargo.toml": "[package]\n",
        "docs/guide.md": "# Guide\n",
        "notes/Beta.md": "# Beta\n",
        "notes/deep/Beta.mdx": "# Other beta\n",
    })
    return root, head


def test_list_lead_in_subject_and_literal_code_spans(repo):
    root, head = repo
    parsed = parse(root)
    handlers = item(parsed, "HTTP handlers")
    assert handlers.statement == "Key directories: `src/api/` — HTTP handlers"
    assert handlers.evidence[0]["line_start"] == handlers.evidence[0]["line_end"] == 5  # its own line
    assert handlers.evidence[1:] == [
        {"type": "folder", "ref": "mention", "target": "src/api/", "path": "src/api", "commit_sha": head}]
    init = item(parsed, "__init__.py")
    # bold markers are removed outside code spans only: `__init__.py` and `__snapshots__/` stay as written
    assert init.statement == ("Key directories: `src/app/__init__.py` makes app a package; snapshots live in "
                              "`__snapshots__/`")
    assert init.evidence[1:] == [
        {"type": "file_span", "ref": "mention", "target": "src/app/__init__.py", "path": "src/app/__init__.py",
         "commit_sha": head},
        # a folder found once as a suffix of the checkout's folders (src/app/__snapshots__, pkg/ui/__snapshots__
        # are two: no unique match), so it stays the literal path, rooted at the repository
        {"type": "folder", "ref": "mention", "target": "__snapshots__/", "path": "__snapshots__", "commit_sha": head}]


def test_table_rows_and_tree_column(repo):
    root, head = repo
    parsed = parse(root)
    assert refs_of(parsed, "the application") == [
        {"type": "folder", "ref": "mention", "target": "src/app/", "path": "src/app", "commit_sha": head}]
    jobs = item(parsed, "JobRunner")
    assert jobs.statement == "Path: `src/app/jobs/`; Purpose: JobRunner"  # the table does not follow the lead-in
    assert jobs.evidence[1:] == [
        {"type": "folder", "ref": "mention", "target": "src/app/jobs/", "path": "src/app/jobs", "commit_sha": head},
        {"type": "symbol", "ref": "mention", "target": "JobRunner", "path": "src/app/jobs/runner.py",
         "commit_sha": head, "symbol": "JobRunner", "line_start": 1, "line_end": 3, "span_hash": sha(RUNNER)}]


def test_fenced_tree_entries_relative_to_the_root(repo):
    root, head = repo
    parsed = parse(root)
    assert refs_of(parsed, "`src/`") == [
        {"type": "folder", "ref": "mention", "target": "src/", "path": "src", "commit_sha": head}]
    main = item(parsed, "entry point")
    assert main.statement == "`src/api/routes/main.py` — entry point"
    assert main.evidence[1:] == [
        {"type": "file_span", "ref": "mention", "target": "api/routes/main.py", "path": "src/api/routes/main.py",
         "commit_sha": head}]
    # an entry the checkout does not have: kept, under the tree's root, anchored at HEAD (unresolvable)
    assert refs_of(parsed, "`src/missing.py`") == [
        {"type": "file_span", "ref": "mention", "target": "missing.py", "path": "src/missing.py", "commit_sha": head}]


def test_heading_folder_and_unique_suffix(repo):
    root, head = repo
    parsed = parse(root)
    assert refs_of(parsed, "Routes live in") == [
        {"type": "file_span", "ref": "mention", "target": "routes/main.py", "path": "src/api/routes/main.py",
         "commit_sha": head}]
    assert refs_of(parsed, "registered in") == [
        {"type": "file_span", "ref": "mention", "target": "handlers/registry.py",
         "path": "plugins/web/handlers/registry.py", "commit_sha": head}]


def test_not_modules_globs_examples_links_and_unresolved(repo):
    root, head = repo
    parsed = parse(root)
    # `2.x` is a version, `Cargo.toml` a file, `self.session()` a method: none is guessed as a module
    assert refs_of(parsed, "Release from") == [
        {"type": "file_span", "ref": "mention", "target": "Cargo.toml", "path": "Cargo.toml", "commit_sha": head},
        {"type": "symbol", "ref": "mention", "target": "self.session()", "path": "src/app/db.py", "commit_sha": head,
         "symbol": "session", "line_start": 2, "line_end": 3, "span_hash": sha("    def session(self):\n"
                                                                               "        return None\n")}]
    assert refs_of(parsed, "Snapshots match") == [
        {"type": "glob", "ref": "mention", "target": "pkg/**/*.snap", "path": "pkg/**/*.snap", "commit_sha": head}]
    assert refs_of(parsed, "Name handlers") == [  # an example: no commit, never checked
        {"type": "file_span", "ref": "example", "target": "my_handler.py", "path": "my_handler.py"}]
    assert refs_of(parsed, "the guide") == [
        {"type": "file_span", "ref": "mention", "target": "docs/guide.md", "path": "docs/guide.md", "commit_sha": head},
        {"type": "file_span", "ref": "mention", "target": "Beta", "path": "notes/Beta.md", "commit_sha": head}]
    assert refs_of(parsed, "old exporter") == [
        {"type": "file_span", "ref": "mention", "target": "tools/export.py", "path": "tools/export.py",
         "commit_sha": head}]
    # prose with nothing to check is still imported, without references
    assert refs_of(parsed, "written with care") == []


def test_wiki_link_prefers_the_notes_folder(tmp_path):
    root = tmp_path / "notes-repo"
    head = make_repo(root, {"memory-bank/activeContext.md": "- Next: finish [[Beta]] and [[Gamma]].\n",
                            "memory-bank/Beta.md": "# Beta\n", "archive/Beta.md": "# old\n"})
    parsed = parse(root, "memory-bank/activeContext.md")
    assert refs_of(parsed, "finish") == [
        {"type": "file_span", "ref": "mention", "target": "Beta", "path": "memory-bank/Beta.md", "commit_sha": head},
        {"type": "file_span", "ref": "mention", "target": "Gamma", "path": "memory-bank/Gamma.md", "commit_sha": head}]


def test_skipped_lines_are_listed_with_why(repo):
    root, _ = repo
    parsed = parse(root)
    skipped = {(line, why) for source, line, why in parsed.skipped if source == "AGENTS.md"}
    lines = AGENTS.splitlines()

    def at(needle: str) -> int:
        return next(i for i, ln in enumerate(lines, start=1) if ln.startswith(needle))

    assert {(1, "heading"), (2, "blank"), (at("Key directories:"), "lead-in (the subject of the lines below)"),
            (at("| Path"), "table header"), (at("|---"), "table separator"), (at("```text"), "code fence"),
            (at("## Notes"), "heading"), (at("make test"), "code block"), (at("```bash"), "code fence")} <= skipped
    # a heading naming a reference is a memory of its own, not a skipped line
    assert (at("### API"), "heading") not in skipped and item(parsed, "API (").line == at("### API")
    # every line is either part of a memory or listed as skipped
    covered = {ln for it in parsed.items for ln in range(it.evidence[0]["line_start"], it.evidence[0]["line_end"] + 1)}
    assert covered | {line for line, _ in skipped} == set(range(1, len(lines) + 1))
    assert not covered & {line for line, _ in skipped}


HEADINGS = """\
# CLAUDE.md

## Architecture

### Phase 1: Preparation (`src/entrypoints/prepare.ts`)

- Reads the inputs in `inputs.ts`.

#### Mode System (`src/modes/`)

- Each mode lives in `agent.ts`.

### Notes without references

- Keep it short and simple.
"""


def test_heading_naming_a_reference_is_a_memory_and_folder_context(tmp_path):
    root = tmp_path / "action"
    head = make_repo(root, {"CLAUDE.md": HEADINGS, "src/entrypoints/prepare.ts": "export {}\n",
                            "src/entrypoints/inputs.ts": "export {}\n", "src/modes/agent.ts": "export {}\n",
                            "agent.ts": "export {}\n", "inputs.ts": "export {}\n"})
    parsed = parse(root, "CLAUDE.md")
    lines = HEADINGS.splitlines()
    phase = item(parsed, "Phase 1")
    assert phase.statement == "Phase 1: Preparation (`src/entrypoints/prepare.ts`)"
    assert phase.evidence[0]["line_start"] == phase.evidence[0]["line_end"] == 5
    assert phase.evidence[1:] == [
        {"type": "file_span", "ref": "mention", "target": "src/entrypoints/prepare.ts",
         "path": "src/entrypoints/prepare.ts", "commit_sha": head}]
    # the folder heading is a memory, resolved from its parents' folders (not from itself) ...
    assert refs_of(parsed, "Mode System") == [
        {"type": "folder", "ref": "mention", "target": "src/modes/", "path": "src/modes", "commit_sha": head}]
    # ... and still the folder of the lines below it (agent.ts at the root is not the one meant)
    assert refs_of(parsed, "Each mode") == [
        {"type": "file_span", "ref": "mention", "target": "agent.ts", "path": "src/modes/agent.ts",
         "commit_sha": head}]
    # a heading naming nothing, and the file's own title, stay skipped
    skipped = {(line, why) for _, line, why in parsed.skipped}
    assert {(1, "heading"), (3, "heading"), (lines.index("### Notes without references") + 1, "heading")} <= skipped
    assert [it.line for it in parsed.items if it.statement.startswith(("Phase", "Mode"))] == [5, 9]


BARE = """\
# Guide

- Build the UI with `cd web-app && yarn install`.
- Test one module with `mvn test -pl hertzbeat-manager`.
- **hertzbeat-manager**: the management service.
- The collector lives in hertzbeat-collector, plugins in `hertzbeat-collector-basic`.
- Run `cd nowhere && make` first.
- **Overview**: a long description of the project.
"""


def test_bare_names_are_references_only_when_they_resolve_exactly(tmp_path):
    root = tmp_path / "hertzbeat"
    head = make_repo(root, {"AGENTS.md": BARE, "web-app/package.json": "{}\n",
                            "hertzbeat-manager/pom.xml": "<project/>\n",
                            "hertzbeat-collector/hertzbeat-collector-basic/pom.xml": "<project/>\n",
                            "other/nowhere/x.txt": "x\n"})
    parsed = parse(root)

    def folder(target: str, path: str) -> dict:
        return {"type": "folder", "ref": "mention", "target": target, "path": path, "commit_sha": head}

    assert refs_of(parsed, "Build the UI") == [folder("web-app", "web-app")]
    assert refs_of(parsed, "Test one module") == [folder("hertzbeat-manager", "hertzbeat-manager")]
    assert refs_of(parsed, "management service") == [folder("hertzbeat-manager", "hertzbeat-manager")]
    # a bare name is never matched as a suffix: `hertzbeat-collector-basic` only lives one level down
    assert refs_of(parsed, "collector lives") == [folder("hertzbeat-collector", "hertzbeat-collector")]
    # names nothing at the repository root (other/nowhere is not an exact match): no reference
    assert refs_of(parsed, "cd nowhere") == []
    assert refs_of(parsed, "Overview") == []


def test_emphasis_is_not_a_glob():
    """A table cell ``**Go**`` (kagent's CLAUDE.md) is emphasis, not a glob; real globs stay globs."""
    from memtui.importers.refs import find_refs

    assert find_refs("**Go**", cells_literal=True) == []
    assert [(r.kind, r.target) for r in find_refs("pkg/**/*.snap", cells_literal=True)] == [("glob", "pkg/**/*.snap")]
    assert [(r.kind, r.target) for r in find_refs("Tests match `*.test`.")] == [("glob", "*.test")]


SHELL = """\
# Tool

## Release

```bash
# bump first
./scripts/bump-version.sh 0.2.0
go build ./cmd/bd
npm test
```

```python
import os
open("scripts/bump-version.sh")
```
"""


def test_shell_fence_lines_naming_paths_are_memories(tmp_path):
    root = tmp_path / "beads"
    head = make_repo(root, {"AGENTS.md": SHELL, "scripts/bump-version.sh": "echo bump\n",
                            "cmd/bd/main.go": "package main\n"})
    parsed = parse(root)
    assert [it.statement for it in parsed.items] == ["Release: `./scripts/bump-version.sh 0.2.0`",
                                                     "Release: `go build ./cmd/bd`",
                                                     'Release: `open("scripts/bump-version.sh")`']
    bump = item(parsed, "./scripts/bump-version")
    assert bump.evidence[0]["line_start"] == bump.evidence[0]["line_end"] == 7
    assert bump.evidence[1:] == [{"type": "file_span", "ref": "mention", "target": "./scripts/bump-version.sh",
                                  "path": "scripts/bump-version.sh", "commit_sha": head}]
    assert refs_of(parsed, "go build") == [{"type": "folder", "ref": "mention", "target": "./cmd/bd",
                                            "path": "cmd/bd", "commit_sha": head}]
    skipped = {n: why for src, n, why in parsed.skipped}
    assert skipped[6] == skipped[9] == "code block"  # the comment and `npm test`
    assert skipped[13] == "code block"  # the python block's `import os` names nothing; line 14 is code naming a path


def test_bold_label_class_names_are_symbols_when_defined(tmp_path):
    """``- **DownloadsWatchdog**: ...`` (browser-use's CLAUDE.md) names a class: a symbol reference
    when the class is defined, nothing when it is not (``**Overview**``, ``**MissingWatchdog**``)."""
    root = tmp_path / "bu"
    src = "class BaseWatchdog:\n    pass\n\n\nclass DownloadsWatchdog(BaseWatchdog):\n    def run(self):\n        return 1\n"
    head = make_repo(root, {"AGENTS.md": "# Watchdogs\n\n- **DownloadsWatchdog**: handles downloads\n"
                                         "- **MissingWatchdog**: was planned\n- **Overview**: see below\n",
                            "bu/watchdogs/downloads.py": src})
    parsed = parse(root)
    (ev,) = refs_of(parsed, "handles downloads")
    assert (ev["type"], ev["ref"], ev["symbol"], ev["path"], ev["line_start"], ev["line_end"], ev["commit_sha"]) == (
        "symbol", "mention", "DownloadsWatchdog", "bu/watchdogs/downloads.py", 5, 7, head)
    assert refs_of(parsed, "was planned") == []
    assert refs_of(parsed, "see below") == []


CODE = '''\
# Agents

## Prompts

Add an entry to `PROMPT_FILES`:

```python
PROMPT_FILES: dict[str, str] = {
    "MyAgent": "prompt/prompt-subagent-myagent.md",
}
profile = SubAgentProfile(tool_set=(tools.BASH,))  # see agent_controller.go
x = undefined_helper(1)
```

```ruby
class SomeModel < Application
  registry = Provider::Registry.for_concept(:rates)
end
```

```bash
# If conflicts in .beads/issues.jsonl, resolve them
make -C test-runner run
```

- `Account::Entry` is an entry; `Provider::` is the namespace. Servers live in `~/.claude/mcp/`.
- `SandboxProvider` manages sandboxes: `acquire`, `release`, `missing`
- Entry points look like `src.tools:bash_tool`.
'''

PROMPT = 'PROMPT_FILES: dict[str, str] = {\n    "MyAgent": "prompt/x.md",\n}\n'
SUB = "class SubAgentProfile:\n    pass\n"
SANDBOX = "class SandboxProvider:\n    def acquire(self):\n        pass\n\n    def release(self):\n        pass\n"
RB = "module Account\n  class Entry\n  end\nend\n\nclass Provider::Registry\n  def self.for_concept(name)\n  end\nend\n"


def test_code_blocks_namespaces_constants_and_methods(tmp_path):
    """Lines of code blocks name what they define, call or qualify (kept when defined; a definition or
    path that resolves nowhere is an example of illustrative code); shell comments are prose;
    ``make -C DIR``; ``Namespace::Class``; ALL_CAPS constants only when defined; methods listed after
    their class; ``~/`` paths are held unchecked; ``module:attr`` entry points."""
    root = tmp_path / "agents"
    head = make_repo(root, {"AGENTS.md": CODE, "src/prompt.py": PROMPT, "src/sub_agent.py": SUB,
                            "src/tools.py": "BASH = 'Bash'\n", "app/models/account.rb": RB,
                            "src/sandbox.py": SANDBOX, ".beads/issues.jsonl": "{}\n",
                            "test-runner/Makefile": "run:\n"})
    parsed = parse(root)

    def sym(target, path, symbol, start, end, ref="mention"):
        return {"type": "symbol", "ref": ref, "target": target, "path": path, "commit_sha": head,
                "symbol": symbol, "line_start": start, "line_end": end, "span_hash": _span_hash(root, path, start, end)}

    (lead,) = [it for it in parsed.items if it.statement == "Add an entry to `PROMPT_FILES`:"]
    assert lead.evidence[1:] == [sym("PROMPT_FILES", "src/prompt.py", "PROMPT_FILES", 1, 3)]
    assert refs_of(parsed, "PROMPT_FILES: dict") == [sym("PROMPT_FILES", "src/prompt.py", "PROMPT_FILES", 1, 3)]
    # a path in a string that resolves nowhere: an example (illustrative code), never checked
    assert refs_of(parsed, '"MyAgent"') == [{"type": "file_span", "ref": "example", "target": "prompt/prompt-subagent-myagent.md",
                                             "path": "prompt/prompt-subagent-myagent.md"}]
    assert [(e["target"], e["ref"], e["path"]) for e in refs_of(parsed, "SubAgentProfile(")] == [
        ("SubAgentProfile", "mention", "src/sub_agent.py"), ("tools.BASH", "mention", "src/tools.py"),
        ("agent_controller.go", "example", "agent_controller.go")]
    assert "undefined_helper" not in " ".join(it.statement for it in parsed.items)  # a guess defined nowhere
    assert ("AGENTS.md", 12, "code block") in parsed.skipped
    assert [(e["target"], e["ref"]) for e in refs_of(parsed, "class SomeModel")] == [("SomeModel", "example")]
    assert [(e["target"], e["symbol"], e["path"]) for e in refs_of(parsed, "for_concept")] == [
        ("Provider::Registry.for_concept", "Provider.Registry.for_concept", "app/models/account.rb"),
        ("Provider::Registry", "Provider.Registry", "app/models/account.rb")]
    assert [(e["target"], e["path"]) for e in refs_of(parsed, "If conflicts")] == [(".beads/issues.jsonl", ".beads/issues.jsonl")]
    assert [(e["type"], e["target"]) for e in refs_of(parsed, "make -C")] == [("folder", "test-runner")]
    entry = refs_of(parsed, "is an entry")
    assert [(e["target"], e.get("symbol"), e["path"], e.get("commit_sha")) for e in entry] == [
        ("Account::Entry", "Account.Entry", "app/models/account.rb", head),
        ("Provider::", "Provider", None, head),
        ("~/.claude/mcp/", None, "~/.claude/mcp/", None)]
    assert [(e["target"], e["symbol"]) for e in refs_of(parsed, "manages sandboxes")] == [
        ("SandboxProvider", "SandboxProvider"), ("acquire", "SandboxProvider.acquire"),
        ("release", "SandboxProvider.release")]
    assert [(e["target"], e["ref"]) for e in refs_of(parsed, "Entry points")] == [("src.tools:bash_tool", "example")]  # "look like": an example


def _span_hash(root: Path, rel: str, start: int, end: int) -> str:
    lines = (root / rel).read_text().splitlines(keepends=True)[start - 1:end]
    return sha("".join(lines))


def test_heading_word_names_a_folder_tried_after_the_root(tmp_path):
    """"## Go Guidelines" then `` `internal/` ``: not at the root, so ``go/internal`` (the folder the
    heading's word names); a folder the root has stays at the root; a tree entry with its comment glued
    on (``kagent-langgraph/# LangGraph``) is an entry; an ``@claude`` mention in a tree is no import."""
    root = tmp_path / "k"
    doc = ("# K\n\n## Go Guidelines\n\n- `internal/` - private code\n- `docs/` - the docs\n\n"
           "```text\npython/\n├── tag/      # @claude mention mode\n└── kagent-langgraph/# LangGraph support\n```\n")
    head = make_repo(root, {"AGENTS.md": doc, "go/internal/a.go": "package a\n", "go/docs/x.md": "x\n",
                            "docs/y.md": "y\n", "python/tag/t.py": "T = 1\n", "python/kagent-langgraph/l.py": "L = 1\n"})
    parsed = parse(root)
    assert refs_of(parsed, "private code") == [{"type": "folder", "ref": "mention", "target": "internal/",
                                                "path": "go/internal", "commit_sha": head}]
    assert [e["path"] for e in refs_of(parsed, "the docs")] == ["docs"]
    assert [e["path"] for e in refs_of(parsed, "mention mode")] == ["python/tag"]
    assert [e["path"] for e in refs_of(parsed, "LangGraph support")] == ["python/kagent-langgraph"]


def test_nested_bullets_tree_globs_and_diagram_names(tmp_path):
    """Bullets nested under ``- **hertzbeat-collector**: ...`` resolve in that folder; a tree entry
    ``*.md`` is a glob under the tree's root; class names in a text diagram (``RemoteMCPServerController``,
    ``kagentReconciler``) are references when defined; one defined nowhere beside two that are
    (``MissingController``) is held as an example of the diagram, never checked."""
    root = tmp_path / "h"
    doc = ("# H\n\n- **hertzbeat-collector**: collectors\n  - `hertzbeat-collector-basic`: basics\n\n"
           "```\nbeads/\n├── cmd/         # CLI\n└── *.md         # Documentation\n```\n\n"
           "```text\nRemoteMCPServerController  ──→  kagentReconciler  ──→  MissingController\n```\n")
    go = "package c\n\ntype RemoteMCPServerController struct{}\n\nfunc kagentReconciler() {}\n"
    head = make_repo(root, {"AGENTS.md": doc, "hertzbeat-collector/hertzbeat-collector-basic/pom.xml": "<p/>\n",
                            "cmd/main.go": "package main\n", "README.md": "# r\n", "go/c/c.go": go})
    parsed = parse(root)
    assert refs_of(parsed, "basics") == [{"type": "folder", "ref": "mention", "target": "hertzbeat-collector-basic",
                                          "path": "hertzbeat-collector/hertzbeat-collector-basic", "commit_sha": head}]
    assert refs_of(parsed, "Documentation") == [{"type": "glob", "ref": "mention", "target": "*.md", "path": "*.md",
                                                 "commit_sha": head}]
    assert [(e["target"], e["path"], e.get("line_start"), e["ref"]) for e in refs_of(parsed, "RemoteMCP")] == [
        ("RemoteMCPServerController", "go/c/c.go", 3, "mention"), ("kagentReconciler", "go/c/c.go", 5, "mention"),
        ("MissingController", None, None, "example")]


def test_mdc_links_from_the_root_and_paths_in_flags(tmp_path):
    """A Cursor rule's ``[balance.rb](mdc:app/models/balance.rb)`` names the root path once (its text
    is the link's own label), also when it does not exist (kept as that root path); a path glued to a
    flag (``--theirs/.beads/x.jsonl``) or given as its value (``--config=conf/app.yml``) is a path."""
    root = tmp_path / "m"
    doc = ("# Rules\n\n- Balances come from [balance.rb](mdc:app/models/balance.rb) and "
           "[gone.rb](mdc:app/models/gone.rb).\n"
           "- Resolve with `git checkout --theirs/.beads/x.jsonl` or `run --config=conf/app.yml`.\n")
    head = make_repo(root, {".cursor/rules/design.mdc": doc, "app/models/balance.rb": "class Balance\nend\n",
                            ".beads/x.jsonl": "{}\n", "conf/app.yml": "a: 1\n"})
    parsed = parse(root, ".cursor/rules/design.mdc")
    assert [(e["target"], e["path"]) for e in refs_of(parsed, "Balances come")] == [
        ("mdc:app/models/balance.rb", "app/models/balance.rb"), ("mdc:app/models/gone.rb", "app/models/gone.rb")]
    assert [(e["target"], e["path"], e["commit_sha"]) for e in refs_of(parsed, "Resolve with")] == [
        (".beads/x.jsonl", ".beads/x.jsonl", head), ("conf/app.yml", "conf/app.yml", head)]


def test_diagrams_emphasis_and_folders_written_in_prose(tmp_path):
    """A Mermaid diagram's labels name paths (``Entry<br/>src/extension.ts``: the HTML break is no path);
    ``**Core Extension**:`` is emphasis over two words, not a glob; "inside the src folder" names the
    folder ``src``; ``__init__.py`` in prose keeps its name."""
    root = tmp_path / "c"
    doc = ("# C\n\n```mermaid\ngraph TB\n    Entry[Extension Entry<br/>src/extension.ts]\n"
           "    Gone[Task<br/>src/task/index.ts]\n```\n\n"
           "- **Core Extension**: Anything inside the src folder, organized by feature\n"
           "- Packages have an __init__.py file\n")
    head = make_repo(root, {"AGENTS.md": doc, "src/extension.ts": "export const a = 1\n",
                            "pkg/__init__.py": "\n"})
    parsed = parse(root)
    assert [(e["target"], e["path"], e["ref"]) for e in refs_of(parsed, "Extension Entry")] == [
        ("src/extension.ts", "src/extension.ts", "mention")]
    assert [(e["target"], e["ref"]) for e in refs_of(parsed, "src/task/index.ts")] == [
        ("src/task/index.ts", "example")]  # a diagram's path that never existed: illustrative
    assert refs_of(parsed, "Core Extension") == [{"type": "folder", "ref": "mention", "target": "src", "path": "src",
                                                  "commit_sha": head}]
    assert [(e["target"], e["path"]) for e in refs_of(parsed, "init")] == [("__init__.py", "pkg/__init__.py")]


def test_version_segments_placeholders_and_suffix_globs(tmp_path):
    """``api/v1/`` is a path (only a path of versions, ``v1.2/v1.3``, is not); ``0.22/01__tags.sql``
    too; ``{service}`` is a placeholder segment, checked as a glob; ``classpath:db/migration/{vendor}``
    roots at the one folder ending with ``db/migration``."""
    parsed, head = parsed_repo(tmp_path / "m", [
        "- **`/server/api/v1/`** - services\n", "- Migrations such as `0.22/01__tags.sql`\n",
        "- Define it in `/proto/api/v1/{service}.proto`\n", "- Flyway (locations: `classpath:db/migration/{vendor}`)\n",
        "- Upgrade from v1.2/v1.3 first\n"], {
        "server/api/v1/memo.go": "package v1\n", "proto/api/v1/memo.proto": "syntax = \"proto3\";\n",
        "app/src/main/resources/db/migration/mysql/V1.sql": "select 1;\n"})
    assert refs_of(parsed, "services") == [{"type": "folder", "ref": "mention", "target": "/server/api/v1/",
                                            "path": "server/api/v1", "commit_sha": head}]
    assert [(e["target"], e["ref"]) for e in refs_of(parsed, "Migrations")] == [("0.22/01__tags.sql", "example")]
    assert [(e["type"], e["path"]) for e in refs_of(parsed, "Define it")] == [("glob", "proto/api/v1/{service}.proto")]
    assert [(e["type"], e["path"]) for e in refs_of(parsed, "Flyway")] == [
        ("glob", "app/src/main/resources/db/migration/{vendor}")]
    assert all(not refs_of(parsed, "Upgrade") for it in parsed.items if "Upgrade" in it.statement)


def test_test_ids_test_names_and_lists_of_names(tmp_path):
    """``pytest tests/test_core.py::test_flush`` names the file and the test; a snake_case test name in
    a command span is a symbol when defined; in a list of crates under ``Key Crates (`crates/`):`` an
    entry that exists nowhere (``audit-logger``) is held as ``crates/audit-logger`` (it never existed),
    because the other entries resolve there."""
    parsed, head = parsed_repo(tmp_path / "r", [
        "```bash\npoetry run pytest -s tests/test_core.py::test_flush\n```\n\n",
        "- `cargo test --package e2e test_local_kms_end_to_end -- --nocapture` - run it\n\n",
        "**Key Crates (`crates/`):**\n\n- `ecstore` - storage\n- `iam` - identity\n- `audit-logger` - audit\n"], {
        "tests/test_core.py": "def test_flush():\n    pass\n", "e2e/src/kms.rs": "#[test]\nfn test_local_kms_end_to_end() {}\n",
        "crates/ecstore/Cargo.toml": "[package]\n", "crates/iam/Cargo.toml": "[package]\n"})
    assert [(e["type"], e["path"], e.get("symbol")) for e in refs_of(parsed, "test_flush")] == [
        ("file_span", "tests/test_core.py", None), ("symbol", "tests/test_core.py", "test_flush")]
    assert [(e["type"], e["path"], e.get("line_start")) for e in refs_of(parsed, "run it")] == [
        ("symbol", "e2e/src/kms.rs", 1), ("folder", "e2e", None)]
    assert refs_of(parsed, "audit") == [{"type": "file_span", "ref": "mention", "target": "audit-logger",
                                         "path": "crates/audit-logger", "commit_sha": head}]
    assert [e["path"] for e in refs_of(parsed, "identity")] == ["crates/iam"]


def test_code_block_methods_commented_out_code_and_placeholder_files(tmp_path):
    """In a TypeScript block ``  private async saveTask() {`` defines ``saveTask`` (an example when
    defined nowhere); ``# prompt_builder=custom_builder,`` is commented-out code naming
    ``custom_builder``; ``TEST=modulename.test`` names a placeholder file: an example."""
    root = tmp_path / "t"
    doc = ("# T\n\n```typescript\nclass Task {\n  private async saveTask() {\n    if (x) {\n    }\n  }\n}\n```\n\n"
           "```python\nrun(\n    # prompt_builder=custom_builder,  # builds the prompt\n)\n```\n\n"
           "```bash\nmake test-single TEST=modulename.test\n```\n")
    make_repo(root, {"AGENTS.md": doc, "src/a.py": "A = 1\n"})
    parsed = parse(root)
    assert [(e["target"], e["ref"]) for e in refs_of(parsed, "saveTask")] == [("saveTask", "example")]
    assert [(e["target"], e["ref"]) for e in refs_of(parsed, "custom_builder")] == [("custom_builder", "example")]
    assert [(e["target"], e["ref"]) for e in refs_of(parsed, "modulename")] == [("modulename.test", "example")]
    assert not any("if (x)" in it.statement for it in parsed.items)


def test_a_path_as_written_is_kept_beside_a_bare_word_naming_the_same_folder(tmp_path):
    """In ``backend/CLAUDE.md``, "skills directory (default: `../skills`)" names the folder ``skills``
    twice: one evidence row, the one written as a path (``../skills``), which reasons quote."""
    root = tmp_path / "d"
    doc = "# D\n\n- `skills.path`: Host path to skills directory (optional, default: `../skills`)\n"
    head = make_repo(root, {"backend/CLAUDE.md": doc, "skills/a/SKILL.md": "# a\n", "backend/app.py": "A = 1\n"})
    parsed = parse(root, "backend/CLAUDE.md")
    assert [e for e in refs_of(parsed, "Host path") if e["path"] == "skills"] == [
        {"type": "folder", "ref": "mention", "target": "../skills", "path": "skills", "commit_sha": head}]


def test_a_lowercase_name_after_a_linked_file_is_what_that_file_defines(tmp_path):
    """"the [synth.rb](mdc:app/synth.rb) provider has a `usage` method": ``usage`` is the method that
    file defines (also defined elsewhere, which does not count); `nothing` defined nowhere names nothing."""
    root = tmp_path / "y"
    doc = "# Y\n\n- The [synth.rb](mdc:app/synth.rb) provider has a `usage` method and a `nothing` one\n"
    make_repo(root, {"AGENTS.md": doc, "app/synth.rb": "class Synth\n  def usage\n    1\n  end\nend\n",
                     "app/other.rb": "class Other\n  def usage\n  end\nend\n"})
    parsed = parse(root)
    assert [(e["type"], e["path"], e.get("symbol"), e.get("line_start")) for e in refs_of(parsed, "provider")] == [
        ("file_span", "app/synth.rb", None, None), ("symbol", "app/synth.rb", "usage", 2)]


def test_prose_paths_under_a_common_top_folder_are_kept_unresolved(tmp_path):
    """"reports generated in target/site/jacoco" (a build output, in no commit) is a path held as
    written; "the build/test cycle" and "src/api" (one slash, plain words) are kept only if they resolve."""
    parsed, head = parsed_repo(tmp_path / "h", [
        "- Test coverage: reports generated in target/site/jacoco\n", "- Keep the build/test cycle short\n",
        "- See src/api for more\n"], {"src/main.py": "A = 1\n"})
    assert refs_of(parsed, "coverage") == [{"type": "file_span", "ref": "mention", "target": "target/site/jacoco",
                                            "path": "target/site/jacoco", "commit_sha": head}]
    assert all(not refs_of(parsed, frag) for frag in ("build/test", "src/api")
               if any(frag in it.statement for it in parsed.items))


def test_self_reference_variables_placeholders_urls_and_code_expressions(tmp_path):
    """The memory file naming itself is a reference; ``cd $it_dir/graalvm_tests`` names a folder by its
    tail; ``cookbook/<folder>/<file>.py`` is an example; ``a.patch/b.patch`` names two files; a URL to a
    raw GitHub file names it when the repository has it; a code expression's calls and Go-qualified types
    (``th.RunCommand(t, cmd.CmdStatus(), test.CmdTest{})``) are symbols when defined; a YAML value
    ``./update_cache.sh`` is an example; ``digraph.DAG`` is the type ``DAG`` of Go package ``digraph``."""
    go = "package th\n\nfunc RunCommand() {}\n\ntype CmdTest struct{}\n"
    parsed, head = parsed_repo(tmp_path / "g", [
        "- Update AGENTS.md documentation\n",
        "```bash\ncd $it_dir/graalvm_tests && mvn test\n.venvs/bin/python cookbook/<folder>/<file>.py\n"
        "curl -L https://raw.githubusercontent.com/o/r/main/scripts/installer.sh | bash\n```\n\n",
        "- `bazel/a.patch/b.patch`: patches\n", "- `a.patch/b.patch`: more patches\n",
        "- Use `th.RunCommand(t, cmd.Missing(), test.CmdTest{})` for tests\n",
        "- Parsed into `digraph.DAG` structs\n",
        "```yaml\nsteps:\n  command: ./update_cache.sh\n```\n"], {
        "integration_tests/graalvm_tests/pom.xml": "<p/>\n", "scripts/installer.sh": "echo\n",
        "a.patch": "x\n", "b.patch": "y\n", "internal/th/th.go": go,
        "internal/digraph/dag.go": "package digraph\n\ntype DAG struct{}\n"})
    assert refs_of(parsed, "Update AGENTS.md") == [{"type": "file_span", "ref": "mention", "target": "AGENTS.md",
                                                    "path": "AGENTS.md", "commit_sha": head}]
    assert [e["path"] for e in refs_of(parsed, "graalvm_tests")] == ["integration_tests/graalvm_tests"]
    assert [(e["target"], e["ref"]) for e in refs_of(parsed, "<folder>")] == [
        (".venvs/bin/python", "mention"), ("cookbook/<folder>/<file>.py", "example")]
    assert [e["path"] for e in refs_of(parsed, "installer.sh")] == ["scripts/installer.sh"]
    assert [e["path"] for e in refs_of(parsed, "more patches")] == ["a.patch", "b.patch"]
    assert [(e["symbol"], e["path"]) for e in refs_of(parsed, "RunCommand")] == [
        ("RunCommand", "internal/th/th.go"), ("CmdTest", "internal/th/th.go")]
    assert [(e["symbol"], e["path"]) for e in refs_of(parsed, "digraph.DAG")] == [("digraph.DAG", "internal/digraph/dag.go")]
    assert [(e["target"], e["ref"]) for e in refs_of(parsed, "update_cache")] == [("./update_cache.sh", "example")]


def test_placeholder_tree_roots_and_a_dot_glued_to_a_folder(tmp_path):
    """A tree rooted at ``specs/<spec-name>/`` shows the layout of any spec folder: its root is an
    example; ``.src/utils/`` (no ``.src`` folder) is ``src/utils`` written with a stray dot, while
    ``.github/workflows`` stays itself."""
    parsed, head = parsed_repo(tmp_path / "s", [
        "Each spec:\n\n```\nspecs/<spec-name>/\n├── CLAUDE.md      # instructions\n└── plan.md        # the plan\n```\n\n",
        "- Move helpers into `.src/utils/`\n", "- CI lives in `.github/workflows/`\n"], {
        "src/utils/a.ts": "export const a = 1\n", ".github/workflows/ci.yml": "on: push\n"})
    assert [(e["target"], e["ref"]) for e in refs_of(parsed, "`specs/<spec-name>/`")] == [("specs/<spec-name>/", "example")]
    assert [(e["target"], e["ref"]) for e in refs_of(parsed, "the plan")] == [("plan.md", "example")]
    assert [e["path"] for e in refs_of(parsed, "helpers")] == ["src/utils"]
    assert [e["path"] for e in refs_of(parsed, "CI lives")] == [".github/workflows"]

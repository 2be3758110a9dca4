"""Repository-wide definitions (RepoSymbolIndex, GitRepo.grep_files) on real git repositories.

Expected names and 1-based inclusive line numbers were worked out by hand from the sources below
(each source's first line is line 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.sources.gitdiff import GitRepo
from memtui.sources.symbol_index import Definition, RepoSymbolIndex
from memtui.sources.symbols import SymbolIndex, call_sites, find_symbol

from tests.gitrepo import git


def commit(path: Path, files: dict[str, str | None]) -> str:
    """Write (or with ``None`` delete) files, commit everything, return the commit sha."""
    for rel, text in files.items():
        f = path / rel
        if text is None:
            f.unlink()
            continue
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "--no-gpg-sign", "-m", "change")
    return git(path, "rev-parse", "HEAD").strip()


PY = '''"""Routing: Other.route used to live here."""


class Router:
    @staticmethod
    def route(path):
        return path


class Other:
    def go(self):
        return "route Ghost"


def parse_markdown(text):
    return text
'''

JAVA = '''package com.acme;

public class RuleRegistry {
    public void resolve(String a) {
    }

    public void resolve(int a) {
    }
}
'''

TS = '''// Other.route is documented in README.md
export abstract class Router {
  route(path: string): string {
    return path;
  }
  abstract close(): void;
}

export interface Shape {
  area(): number;
}

export type Id = string;

enum Color {
  Red,
}

export function parseTs(x: string) {
  return x;
}

export const handler = async (req: Request) => {
  return req;
};

namespace Api {
  export function call() {}
}

class Other {
  go() {
    return "route";
  }
}
'''

TSX = '''export function App() {
  return <div>route</div>;
}

export class View {
  render() {
    return <span />;
  }
}
'''

MJS = '''export class Store {
  get(key) {
    return key;
  }
}

export const makeStore = () => new Store();

export function* ids() {}

const api = {
  fetchAll() {},
};
'''

CJS = '''function legacy() {
  return 1;
}
module.exports = { legacy };
'''

JSX = '''export default function Button() {
  return <button />;
}
'''

GO = ('package router\n\n// Route docs: Other.route\ntype Router struct {\n\tname string\n}\n\n'
      'type (\n\tReader interface {\n\t\tRead(p []byte) int\n\t}\n\tID = string\n)\n\n'
      'func (r *Router) Route(path string) string {\n\treturn path\n}\n\n'
      'func (g Gen[T]) Get() {}\n\nfunc NewRouter() *Router {\n\treturn &Router{}\n}\n\n'
      'const MaxRoutes = 10\n')

RS = '''/// Router docs mention Other.route
#[derive(Debug)]
pub struct Router<T> {
    inner: T,
}

impl<T> foo::Router<T> {
    pub fn route(&self) -> &str {
        "route"
    }
}

impl Display for Router<u8> {
    fn fmt(&self) {}
}

pub trait Handler {
    fn handle(&self);
}

pub enum Kind {
    A,
}

type Alias = u32;

mod inner {
    pub fn helper() {}
}

const MAX: u32 = 1;
static NAME: &str = "x";

macro_rules! route_all {
    () => {};
}
'''

README = "# Notes\n\n`Other.route`, `Ghost` and `Router.route` are described here; so is vanished().\n"

OLD = "def vanished():\n    return 1\n"

FILES = {"py/router.py": PY, "java/com/acme/RuleRegistry.java": JAVA, "web/router.ts": TS,
         "web/App.tsx": TSX, "web/util.mjs": MJS, "web/legacy.cjs": CJS, "web/Button.jsx": JSX,
         "go/router.go": GO, "rs/lib.rs": RS, "README.md": README, "old/gone.py": OLD}

# Every definition of each file, (qualified name, start, end), worked out by hand.
EXPECTED = {
    "py/router.py": [("Router", 4, 7), ("Router.route", 5, 7), ("Other", 10, 12),
                     ("Other.go", 11, 12), ("parse_markdown", 15, 16)],
    "java/com/acme/RuleRegistry.java": [("com.acme", 1, 1), ("RuleRegistry", 3, 9), ("RuleRegistry.resolve", 4, 5),
                                        ("RuleRegistry.resolve", 7, 8)],
    "web/router.ts": [("Router", 2, 7), ("Router.route", 3, 5), ("Router.close", 6, 6),
                      ("Shape", 9, 11), ("Shape.area", 10, 10), ("Id", 13, 13), ("Color", 15, 17),
                      ("parseTs", 19, 21), ("handler", 23, 25), ("Api", 27, 29),
                      ("Api.call", 28, 28), ("Other", 31, 35), ("Other.go", 32, 34)],
    "web/App.tsx": [("App", 1, 3), ("View", 5, 9), ("View.render", 6, 8)],
    "web/util.mjs": [("Store", 1, 5), ("Store.get", 2, 4), ("makeStore", 7, 7), ("ids", 9, 9),
                     ("api", 11, 13), ("api.fetchAll", 12, 12)],
    "web/legacy.cjs": [("legacy", 1, 3)],
    "web/Button.jsx": [("Button", 1, 3)],
    "go/router.go": [("Router", 4, 6), ("Reader", 9, 11), ("Reader.Read", 10, 10), ("ID", 12, 12),
                     ("Router.Route", 15, 17), ("Gen.Get", 19, 19), ("NewRouter", 21, 23),
                     ("MaxRoutes", 25, 25)],
    "rs/lib.rs": [("Router", 2, 5), ("Router.route", 8, 10), ("Router.fmt", 14, 14),
                  ("Handler", 17, 19), ("Handler.handle", 18, 18), ("Kind", 21, 23),
                  ("Alias", 25, 25), ("inner", 27, 29), ("inner.helper", 28, 28), ("MAX", 31, 31),
                  ("NAME", 32, 32), ("route_all", 34, 36)],
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """(path, first commit with old/gone.py, second commit where it is deleted)."""
    path = tmp_path_factory.mktemp("symrepo")
    git(path, "init", "-q", "-b", "main")
    first = commit(path, FILES)
    second = commit(path, {"old/gone.py": None})
    return path, first, second


def test_every_language_gives_exact_qualified_names_and_lines():
    index = SymbolIndex()
    for path, expected in EXPECTED.items():
        got = [(s.name, s.start_line, s.end_line) for s in index.symbols(FILES[path], path)]
        assert got == expected, path


def test_definitions_across_the_repository(repo):
    path, _, head = repo
    index = RepoSymbolIndex(GitRepo(path), head)
    names = [name for defs in EXPECTED.values() for name, _, _ in defs]
    found = index.definitions(names)
    for file, defs in EXPECTED.items():
        for name, start, end in defs:
            assert Definition(name, file, start, end) in found[name], (file, name)
    assert found["Router.route"] == [Definition("Router.route", "py/router.py", 5, 7),
                                     Definition("Router.route", "rs/lib.rs", 8, 10),
                                     Definition("Router.route", "web/router.ts", 3, 5)]
    assert found["Router.Route"] == [Definition("Router.Route", "go/router.go", 15, 17)]
    assert found["RuleRegistry.resolve"] == [
        Definition("RuleRegistry.resolve", "java/com/acme/RuleRegistry.java", 4, 5),
        Definition("RuleRegistry.resolve", "java/com/acme/RuleRegistry.java", 7, 8)]


def test_dotted_suffix_rule_and_mentions_are_not_definitions(repo):
    path, _, head = repo
    found = RepoSymbolIndex(GitRepo(path), head).definitions(
        ["Other.route", "Ghost", "route", "Router.fmt", "Handler.handle", "Gen.Get", "Reader.Read",
         "com.acme.RuleRegistry", "fetchAll", "Api.call", "NoSuchThing", ""])
    assert found["Other.route"] == []  # Other exists (py, ts) but has no route; mentioned in comments/README
    assert found["Ghost"] == []  # only in Markdown and a string
    # a method of an object literal a top-level variable holds is a definition (``api.fetchAll``)
    assert [(d.name, d.start_line) for d in found["fetchAll"]] == [("api.fetchAll", 12)]
    assert found["NoSuchThing"] == [] and found[""] == []
    assert [(d.path, d.name) for d in found["route"]] == [
        ("py/router.py", "Router.route"), ("rs/lib.rs", "Router.route"), ("web/router.ts", "Router.route")]
    assert found["Router.fmt"] == [Definition("Router.fmt", "rs/lib.rs", 14, 14)]  # impl Display for Router<u8>
    assert found["Handler.handle"] == [Definition("Handler.handle", "rs/lib.rs", 18, 18)]
    assert found["Gen.Get"] == [Definition("Gen.Get", "go/router.go", 19, 19)]
    assert found["Reader.Read"] == [Definition("Reader.Read", "go/router.go", 10, 10)]
    assert found["com.acme.RuleRegistry"] == [
        Definition("RuleRegistry", "java/com/acme/RuleRegistry.java", 3, 9)]
    assert found["Api.call"] == [Definition("Api.call", "web/router.ts", 28, 28)]


def test_file_deleted_at_the_revision_defines_nothing(repo):
    path, first, head = repo
    git_repo = GitRepo(path)
    assert RepoSymbolIndex(git_repo, head).definitions(["vanished"]) == {"vanished": []}
    assert RepoSymbolIndex(git_repo, first).definitions(["vanished"]) == {
        "vanished": [Definition("vanished", "old/gone.py", 1, 2)]}
    assert RepoSymbolIndex(git_repo, "0" * 40).definitions(["Router"]) == {"Router": []}


def test_grep_files_and_process_count(repo):
    path, first, head = repo
    git_repo = GitRepo(path)
    assert git_repo.grep_files(head, ["vanished"]) == {"README.md"}
    assert git_repo.grep_files(first, ["vanished"], ["*.py"]) == {"old/gone.py"}
    assert git_repo.grep_files(head, ["Ghost"], ["*.py", "*.md"]) == {"py/router.py", "README.md"}
    assert git_repo.grep_files(head, ["Rout"]) == set()  # whole words only
    assert git_repo.grep_files(head, ["nowhere_at_all"]) == set()
    assert git_repo.grep_files("no-such-rev", ["Router"]) == set()
    git_repo.git_processes = 0
    index = RepoSymbolIndex(git_repo, head)
    names = [f"name{i}" for i in range(450)] + ["Router.route", "MAX"]
    found = index.definitions(names)
    assert git_repo.git_processes == 3 + 1  # 452 words in batches of 200, one cat-file --batch
    assert found["MAX"] == [Definition("MAX", "rs/lib.rs", 31, 31)]
    assert index.definitions(["MAX", "Router.route"])["MAX"] == found["MAX"]
    assert git_repo.git_processes == 4  # memoized


def test_missing_blob_is_skipped(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    first = commit(tmp_path, {"a.py": "def keep():\n    pass\n", "b.py": "def lost():\n    pass\n",
                              "c.go": "package c\n\nfunc lost() {}\n"})
    oid = git(tmp_path, "rev-parse", f"{first}:b.py").strip()
    (tmp_path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    git_repo = GitRepo(tmp_path)
    found = RepoSymbolIndex(git_repo, first).definitions(["keep", "lost"])
    assert found == {"keep": [Definition("keep", "a.py", 1, 2)], "lost": [Definition("lost", "c.go", 3, 3)]}
    # A candidate that grep listed but whose blob cannot be read is skipped too.
    git_repo.grep_files = lambda rev, words, pathspecs=(): {"a.py", "b.py", "c.go"}
    found = RepoSymbolIndex(git_repo, first).definitions(["keep", "lost"])
    assert found == {"keep": [Definition("keep", "a.py", 1, 2)], "lost": [Definition("lost", "c.go", 3, 3)]}


def test_java_and_python_lookups_unchanged_and_calls_in_new_languages():
    assert find_symbol(JAVA, "RuleRegistry.java", "com.acme.RuleRegistry.resolve").start_line == 4
    assert find_symbol(PY, "router.py", "route").name == "Router.route"
    assert find_symbol(GO, "router.go", "Route").name == "Router.Route"
    assert find_symbol(README, "README.md", "Ghost") is None
    ts = "class A {\n  run() {\n    helper();\n    this.go();\n    new Foo();\n  }\n}\n"
    assert call_sites(ts, "a.ts", "A.run") == [("helper", 3), ("go", 4), ("this.go", 4), ("new Foo", 5)]
    rs = "impl A {\n    fn run(&self) {\n        Router::new();\n        self.go();\n    }\n}\n"
    assert call_sites(rs, "a.rs", "A.run") == [("new", 3), ("Router.new", 3), ("go", 4), ("self.go", 4)]
    go = "package a\n\nfunc (a A) Run() {\n\tpkg.New()\n}\n"
    assert call_sites(go, "a.go", "A.Run") == [("New", 4), ("pkg.New", 4)]


def test_typescript_object_type_and_object_literal_methods():
    """``type Mode = { shouldTrigger(): boolean }`` and a top-level ``const tagMode = { shouldTrigger() {} }``
    define methods; an object literal inside a function does not (seen on anthropics/claude-code-action)."""
    from memtui.sources.symbols import SymbolIndex

    src = ("export type Mode = {\n  shouldTrigger(context: Ctx): boolean;\n};\n"
           "export const tagMode: Mode = {\n  shouldTrigger(context) {\n    return true;\n  },\n};\n"
           "function outer() { const o = { inner() { return 1; } }; }\n")
    found = [(s.name, s.start_line, s.end_line) for s in SymbolIndex().symbols(src, "modes.ts")]
    assert found == [("Mode", 1, 3), ("Mode.shouldTrigger", 2, 2), ("tagMode", 4, 8),
                     ("tagMode.shouldTrigger", 5, 7), ("outer", 9, 9)]


RUBY = '''module Account
  class Entry < ApplicationRecord
    LIMIT = 3

    def self.build(attrs)
      new(attrs)
    end

    def sync_data
      # Account::Ghost is mentioned, not defined
    end
  end
end

class Provider::Registry
  def self.for_concept(name)
  end
end
'''

TOOLS = '''BASH = "Bash"
READ = "Read"


def helper():
    LOCAL = 1
    return LOCAL
'''


def test_ruby_definitions_and_module_constants(tmp_path):
    """Ruby classes, modules, methods and constants (``class Provider::Registry`` is ``Provider.Registry``;
    a mention in a comment is no definition); Python module-level constants, also qualified by their
    module (``tools.BASH``), never a function's local."""
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    head = commit(root, {"app/models/account.rb": RUBY, "pkg/tools.py": TOOLS})
    found = RepoSymbolIndex(GitRepo(root), head).definitions(
        ["Account.Entry", "Entry.sync_data", "Account.Entry.LIMIT", "Provider.Registry", "Registry.for_concept",
         "Account.Ghost", "tools.BASH", "READ", "LOCAL"])
    rb = "app/models/account.rb"
    assert found["Account.Entry"] == [Definition("Account.Entry", rb, 2, 12)]
    assert found["Entry.sync_data"] == [Definition("Account.Entry.sync_data", rb, 9, 11)]
    assert found["Account.Entry.LIMIT"] == [Definition("Account.Entry.LIMIT", rb, 3, 3)]
    assert found["Provider.Registry"] == [Definition("Provider.Registry", rb, 15, 18)]
    assert found["Registry.for_concept"] == [Definition("Provider.Registry.for_concept", rb, 16, 17)]
    assert found["Account.Ghost"] == []
    assert found["tools.BASH"] == [Definition("BASH", "pkg/tools.py", 1, 1)]
    assert found["READ"] == [Definition("READ", "pkg/tools.py", 2, 2)]
    assert found["LOCAL"] == []


def test_a_package_reexport_under_a_new_name_is_a_definition(tmp_path):
    """``from .CallbackHandler import LangchainCallbackHandler as CallbackHandler`` at the top of a
    package's ``__init__.py`` defines ``CallbackHandler`` (lines 1-3, the statement); the same line in a
    plain module, a plain import, and an alias that keeps the name define nothing."""
    git(tmp_path, "init", "-q", "-b", "main")
    init = ("from .CallbackHandler import (\n    LangchainCallbackHandler as CallbackHandler,\n)\n"
            "from .utils import helper as helper\nimport os as operating_system\n")
    head = commit(tmp_path, {"lf/langchain/__init__.py": init,
                             "lf/langchain/CallbackHandler.py": "class LangchainCallbackHandler:\n    pass\n",
                             "lf/other.py": "from .x import Y as Renamed\n"})
    found = RepoSymbolIndex(GitRepo(tmp_path), head).definitions(
        ["CallbackHandler", "langchain.CallbackHandler", "helper", "operating_system", "Renamed"])
    assert found == {"CallbackHandler": [Definition("CallbackHandler", "lf/langchain/__init__.py", 1, 3)],
                     "langchain.CallbackHandler": [Definition("CallbackHandler", "lf/langchain/__init__.py", 1, 3)],
                     "helper": [], "operating_system": [], "Renamed": []}


def test_tcl_procs_are_definitions(tmp_path):
    """A Tcl file has no grammar here: its ``proc`` lines define names (lines 2-6 for the multi-line
    body, 7-7 for ``::ns::helper``, qualified ``ns.helper``); a proc merely called defines nothing."""
    git(tmp_path, "init", "-q", "-b", "main")
    tcl = ("set x 1\nproc do_execsql_test_on_db {db name sql} {\n  if {1} {\n    puts x\n  }\n}\n"
           "proc ::ns::helper {} { return 1 }\ndo_execsql_test_on_db a b c\n")
    head = commit(tmp_path, {"testing/tester.tcl": tcl, "testing/use.tcl": "do_execsql_test_on_db x y z\n"})
    found = RepoSymbolIndex(GitRepo(tmp_path), head).definitions(["do_execsql_test_on_db", "ns.helper", "helper"])
    assert found == {"do_execsql_test_on_db": [Definition("do_execsql_test_on_db", "testing/tester.tcl", 2, 6)],
                     "ns.helper": [Definition("ns.helper", "testing/tester.tcl", 7, 7)],
                     "helper": [Definition("ns.helper", "testing/tester.tcl", 7, 7)]}


def test_typescript_interface_and_type_alias_fields_are_definitions():
    """``mockIpcRenderer: IpcRenderer;`` in ``interface TestEnvironment`` defines
    ``TestEnvironment.mockIpcRenderer`` (line 2); ``mode`` of ``type S = { mode: string }`` is ``S.mode``
    (line 5); a parameter's inline object type (``{ x: number }``) defines nothing."""
    ts = ("export interface TestEnvironment {\n  mockIpcRenderer: IpcRenderer;\n  run(): void;\n}\n"
          "type S = { mode: string }\nfunction f(o: { x: number }) {}\n")
    names = [(s.name, s.start_line, s.end_line) for s in SymbolIndex().symbols(ts, "tests/helpers.ts")]
    assert names == [("TestEnvironment", 1, 4), ("TestEnvironment.mockIpcRenderer", 2, 2), ("TestEnvironment.run", 3, 3),
                     ("S", 5, 5), ("S.mode", 5, 5), ("f", 6, 6)]

"""References a memory line names (paths, folders, globs, symbols, links) and their evidence.

:func:`find_refs` reads one line of Markdown and returns what it names, literally (code spans are
never rewritten); :class:`RefResolver` resolves them against the files of the repository at the
anchor commit and turns each into one evidence dictionary (see :func:`RefResolver.evidence`).

What counts as a reference:

* code spans, taken literally: a path (``src/api/``, ``__init__.py``, ``Cargo.toml``, ``.env``,
  ``Makefile``), a glob (``pkg/**/*.snap``), a symbol (``Class``, ``Class.method``, ``func()``,
  ``snake_case``, ``camelCase``, ``Namespace::Class``; an ALL_CAPS constant only when it is defined),
  an entry point ``pkg.mod:attr``, a home-folder path ``~/.config/x`` (held, never checked), a
  dotted Python module (``pkg.mod``: only lowercase identifiers,
  two parts or more, not a version such as ``2.x``, not ``self.x``/``this.x``/``cls.x``, not a call on
  a lowercase receiver). Commands inside a span (``pytest tests/unit``) contribute their path
  tokens; flags, env vars, single lowercase words and ALL_CAPS names are not references;
* a line of a fenced shell block (:func:`command_refs`): its path tokens by the same rules, and
  bare tokens that exactly name a file or folder; a line with no path-like token names nothing;
* a lowercase name after a class in the same line (`` `SandboxProvider` manages `acquire` ``) is that
  class's method when it defines one (:func:`_owners`); ``prepare()`` after `` `Mode` `` is tried as
  ``Mode.prepare`` first;
* a line of a code block in a programming language (:func:`code_line_refs`): definitions, path
  strings and comments literally, calls and qualified names when defined; all ``illustrative`` (an
  example when they resolve nowhere, and never resolved by suffix);
* Markdown links ``[text](path)`` (relative to the memory file first; Cursor's ``mdc:path`` from the
  repository root; a link text naming its own target is not a second reference) and wiki links ``[[Beta]]``
  (``Beta.md``/``Beta.mdx``, preferring the note's folder); ``@path`` imports;
* plain text: ``dir/file.ext``, ``file.ext`` with a known extension, folders written ``dir/``,
  globs, and calls ``snake_case()``/``camelCase()``. Guesses from prose (``a/b`` without an
  extension, ``CamelCase`` words, ``Class.member``) count only when they resolve (``and/or``,
  ``GitHub`` are words, not references).
* a bare name that exactly names an existing file or folder (``web-app`` in ``cd web-app && yarn install``,
  ``**hertzbeat-manager**:``, ``hertzbeat-collector`` in prose): any token of a code span, the text of a
  bold label, a hyphenated or underscored word. Such a token counts only when it resolves *exactly*
  (under the heading's folder, the tree root, the file's folder or the repository root; never as a
  unique suffix, too loose for bare words): ``cd nowhere`` or ``**Overview**:`` name nothing.

* also: a test id ``tests/test_x.py::test_y`` (the file and the test); ``$var/path`` (the path by its
  tail); a raw/blob GitHub URL (the file it names, when this repository has it); a code expression in a
  span (``th.RunCommand(t, cmd.CmdStatus())``: its calls, Go ``pkg.Type`` names, a camelCase object);
  ``-Dtest=Class#method``; ``a.patch/b.patch`` (two files); ``{name}`` segments (a placeholder, checked
  as a glob); a lowercase name beside a file the line names (a name that file defines); "the src
  folder" (a bare word before folder/directory); prose paths under common top folders
  (``target/site/jacoco``) even when unresolved; ``<br/>`` and other HTML tags are no paths.

A reference is an *example* (no commit, never checked) when introduced by "e.g.", "for example",
"for instance", "such as", "examples:" or "like", or when its name is a placeholder (``foo``,
``bar``, ``baz``, ``example``, ``my_``/``your_``, ``xxx``, ``<name>``, ``modulename.test``,
``TestClass#testMethod``) that resolves nowhere.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

from memtui.domain.globs import glob_regex

__all__ = ["RawRef", "find_refs", "command_refs", "code_line_refs", "RefResolver", "FILE_EXTS", "looks_like_path",
           "example_before"]

FILE_EXTS = frozenset({
    "md", "mdc", "mdx", "markdown", "rst", "adoc", "txt", "py", "pyi", "pyx", "ipynb", "js", "mjs", "cjs", "ts",
    "mts", "cts", "tsx", "jsx", "vue", "svelte", "astro", "json", "jsonc", "json5", "jsonl", "yaml", "yml", "toml",
    "ini", "cfg", "conf", "env", "lock", "java", "kt", "kts", "scala", "groovy", "gradle", "go", "mod", "sum", "rs",
    "rb", "php", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "m", "mm", "swift", "cs", "fs", "vb", "sql", "prisma",
    "graphql", "gql", "proto", "sh", "bash", "zsh", "fish", "ps1", "bat", "cmd", "html", "htm", "css", "scss",
    "sass", "less", "xml", "xsd", "svg", "png", "jpg", "jpeg", "gif", "webp", "ico", "pdf", "csv", "tsv", "log",
    "properties", "tf", "tfvars", "hcl", "nix", "dockerfile", "snap", "lua", "r", "jl", "ex", "exs", "erl", "hs",
    "ml", "clj", "dart", "zig", "nim", "pl", "pm", "el", "vim", "tex", "bib", "wasm", "so", "dll", "jar", "whl",
    "gz", "zip", "tar", "db", "sqlite", "pem", "crt", "key", "template", "tmpl", "j2", "jinja", "hbs", "ejs",
    "sol", "cu", "cuh", "cmake", "mk", "in", "pbxproj", "plist", "xcconfig", "storyboard", "xib", "resx", "csproj",
    "sln", "editorconfig", "gitignore", "dockerignore", "npmrc", "nvmrc", "service", "spec"})
_BARE_FILES = frozenset({"makefile", "dockerfile", "containerfile", "justfile", "procfile", "gemfile", "rakefile",
                         "vagrantfile", "brewfile", "pipfile", "jenkinsfile", "codeowners", "license", "readme",
                         "changelog", "gnumakefile", "tiltfile", "earthfile", "snakefile", "buildfile"})
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s)>\]`]+|\bmailto:[^\s)>\]]+", re.I)
_WIKI = re.compile(r"!?\[\[([^\]|#\n]*)(?:#[^\]|\n]*)?(?:\|[^\]\n]*)?\]\]")
_LINK = re.compile(r"!?\[((?:[^\]\n]|\][^(\n])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_IMPORT = re.compile(r"(?:^|(?<=[\s(]))@([^\s)\]`'\",;]+)")
_VERSION = re.compile(r"^v?\d+(?:\.(?:\d+|[xX*]))+(?:[-+.][\w.]*)?$|^v\d+$|^\d[\w.]*$")
_IDENT_CALL = re.compile(r"^([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(\([^()]*\))?$")
_LOWER_ID = re.compile(r"^[a-z_][a-z0-9_]*$")
_CAMEL = re.compile(r"^(?:[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+|[A-Z]{2,}[a-z][A-Za-z0-9]*|[a-z][a-z0-9]*[A-Z]\w*)$")
_PLAIN_CAMEL = re.compile(r"(?<![\w./@$`-])([A-Z][a-z0-9]+(?:[A-Z]+[a-z0-9]+)+|[A-Z]{2,}[a-z0-9]+(?:[A-Z]+[a-z0-9]+)+|"
                          r"[a-z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)(?![\w/`-])")
_DOTTED_CLASS = re.compile(r"(?<![\w./@-])([A-Z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(\(\))?(?![\w/-])")
_CALL = re.compile(r"(?<![\w.$])((?:[A-Za-z_][A-Za-z0-9_]*\.)*(?:[A-Za-z_][A-Za-z0-9_]*_[A-Za-z0-9_]+|"
                   r"[a-z][a-z0-9]*[A-Z]\w*|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+))\(\)")
_TOKEN = re.compile(r"(?:[^\s()\[\]<>,;\"'|`]|<[A-Za-z][\w-]*>)+")
_GLOB_CHARS = re.compile(r"[*?]|\{[^{}]*,[^{}]*\}|\[[^\]]+\]|(?<!\$)\{[A-Za-z_][\w-]*\}")
_PLACEHOLDER = re.compile(r"(?:^|[/_.\-\s])(?:foo|bar|baz|qux|quux|xxx+|yyy+|example)(?:$|[/_.\-\s(])|"
                          r"(?:^|[/.\-])(?:my|your)[_\-]|<[^>]+>|\{\{|\.\.\.|…|"
                          r"(?:^|/)(?:module|file|test|package|class|crate|some|your|my)[_-]?name(?:\.|/|$)", re.I)
_NAMED_FILE = re.compile(r"(?:module|file|test|package|class|crate|some|your|my)[_-]?name\.[A-Za-z][A-Za-z0-9]{0,7}", re.I)
_NODE_ID = re.compile(r"^(?P<path>[^\s:]+\.[A-Za-z][A-Za-z0-9]{0,11})::(?P<name>[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)(?:\[.*\])?$")
_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_VAR_PATH = re.compile(r"^\$\{?[A-Za-z_]\w*\}?/([\w.@+-][\w.@+/-]*)$")  # cd $it_dir/graalvm_tests
_REPO_URL = re.compile(r"https?://(?:raw\.githubusercontent\.com/[^/\s]+/[^/\s]+/[^/\s]+|"
                       r"github\.com/[^/\s]+/[^/\s]+/(?:blob|tree)/[^/\s]+)/([^\s?#)>\]`'\"]+)")
_PLACEHOLDER_CODE = re.compile(r"(?:^|[.#])(?:TestClass|SomeClass|ClassName|MyClass|testMethod|methodName)(?:$|[.#(])")
_CODE_EXPR = re.compile(r"^[A-Za-z_$][\w$.]*\(.*\)\S*$")  # th.RunCommand(t, cmd.CmdStatus(), ...)
_HTML_TAG = re.compile(r"</?(?:br|b|i|em|strong|code|sub|sup|p|div|span|hr|img|u|s|small|kbd|li|ul|ol|tt)\b[^<>]*?/?>",
                       re.I)
# folders most repositories or their builds have: "reports generated in target/site/jacoco" is a path
_TOP_DIRS = frozenset({"src", "lib", "app", "apps", "packages", "pkg", "cmd", "internal", "tests", "docs", "scripts",
                       "bin", "build", "dist", "target", "out", "crates", "config", ".github"})
_FOLDER_WORD = re.compile(r"\s+(?:folder|directory|dir)\b", re.I)
_PLACEHOLDER_CAMEL = re.compile(r"^(?:My|Your|Foo|Bar|Baz|Example)[A-Z]")
_RECEIVERS = frozenset({"self", "this", "cls", "super"})
_BARE = re.compile(r"[A-Za-z0-9_@+][\w.@+-]*")  # a name that may be a file or folder (no "/")
_BARE_WORD = re.compile(r"[A-Za-z0-9][\w.-]*[A-Za-z0-9]")  # ... and, in prose, hyphenated/underscored
_HOME = re.compile(r"~/[^\s`'\"]*")
_VALUE = re.compile(r"^(?:(?:--?[A-Za-z][\w-]*|[A-Za-z_][A-Za-z0-9_]*)=|--?[A-Za-z][\w-]*/(?=[\w.]))(.+)$")
_SCOPED = re.compile(r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*::(?:[A-Za-z_]\w*(?:\(\))?)?")
_ENTRY_POINT = re.compile(r"([A-Za-z_][\w.]*):([A-Za-z_]\w*)")
_SCHEME = re.compile(r"^(?:mdc|classpath|file):(?!//)")
_BOLD_SPAN = re.compile(r"(?<![\w*])\*\*\s*([^*\s]+?)\s*:?\s*\*\*|(?<![\w_])__\s*([^_\s]+?)\s*:?\s*__(?!\w|\.\w)")


def _bare(tok: str, start: int) -> RawRef | None:
    """A bare name kept only if it exactly names a file or folder of the checkout (see the module doc)."""
    tok = tok.rstrip(".:,!?")
    if not _BARE.fullmatch(tok) or _VERSION.match(tok) or not re.search(r"[A-Za-z]", tok):
        return None
    return RawRef("path", tok, start, literal=False, exact=True)


@dataclass
class RawRef:
    """One thing a line names, as written. ``kind``: ``path`` (a file or folder), ``glob``, ``symbol``,
    ``module`` (a dotted module name, or failing that a symbol), ``wiki``; ``target``: as written;
    ``symbol``: the name to look up (symbols, modules); ``start``: offset in the line (order);
    ``literal``: a code span, link or table cell (kept even when it resolves nowhere); otherwise a
    guess from prose, kept only when it resolves (paths without an extension, CamelCase words);
    ``link``: relative to the memory file first; ``example``/``placeholder``: see the module doc;
    ``bases``: folders to try first (a fenced tree's root)."""

    kind: str
    target: str
    start: int
    literal: bool = True
    symbol: str | None = None
    link: bool = False
    example: bool = False
    placeholder: bool = False
    bases: tuple[str, ...] = ()
    exact: bool = False  # a bare name: a reference only when it names an existing file or folder exactly
    owner: str | None = None  # a class named earlier in the line: ``Class.symbol`` is tried first
    outside: bool = False  # a home-folder path (``~/.config/x.json``): held, never checked against the repository
    illustrative: bool = False  # written in a code block: an example when it resolves nowhere
    group: str | None = None  # one of a list's or diagram's entries: held when most of the others resolve
    in_file: str | None = None  # a file named before it in the line (as written): a name it defines there


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def example_before(text: str, start: int) -> bool:
    """Whether what precedes offset ``start`` (in the same clause) introduces an example."""
    seg = re.sub(r"\b[eE]\.\s?[gG]\.,?", " egmark ", text[:start])
    seg = re.sub(r"\b[iI]\.\s?[eE]\.,?", " iemark ", seg)
    seg = re.split(r"[;!?)]|\.(?=\s|$)|\s[—–]\s|\n", seg)[-1].casefold()
    if re.search(r"egmark|\bfor example\b|\bfor instance\b|\bsuch as\b|\bexamples?\s*:|\bsay,", seg):
        return True
    return bool(re.search(r"\b(?:like|e\.g)\s*(?:(?:`[^`]*`|\S+)\s*(?:,|\bor\b|\band\b|/)\s*)*$", seg))


def looks_like_path(token: str) -> bool:
    """A file name with a known extension, a known extension-less file, or a dotfile."""
    name = token.rsplit("/", 1)[-1]
    if name.casefold() in _BARE_FILES:
        return True
    if re.fullmatch(r"\.[A-Za-z][\w.-]*", name):
        return True
    m = re.fullmatch(r"[\w@+-][\w.@+-]*\.([A-Za-z][A-Za-z0-9]{0,11})", name)
    return bool(m) and m.group(1).casefold() in FILE_EXTS


def _versionish(token: str) -> bool:
    """``2.x``, ``v1.2/v1.3``: every segment a version (``api/v1/`` and ``0.22/01__tags.sql`` are paths)."""
    parts = [part for part in token.strip("/").split("/") if part]
    return bool(parts) and all(_VERSION.match(part) and not looks_like_path(part) for part in parts)


_EMPHASIS = re.compile(r"^(\*\*|__|\*|_)[^*_\s][^*]*?\1$")


def _is_glob(token: str) -> bool:
    if _EMPHASIS.match(token) and "/" not in token:
        return False  # **Go**, *note*: emphasis around a word, not a glob (a table cell in kagent's CLAUDE.md)
    return bool(_GLOB_CHARS.search(token)) and bool(re.search(r"[\w]", token)) and (
        "/" in token or "." in token or "**" in token)


_SHELL_COMMENT = re.compile(r"(?:^|(?<=\s))#(?![!\[{])")
_NAME_LIST = re.compile(r"\s*[\w.:#$*-][\w.:#/$*-]*(?:\(\))?(?:(?:\s*,\s*|\s+/\s+)[\w.:#$*-][\w.:#/$*-]*(?:\(\))?)+\s*")
_LIST_SEP = re.compile(r"\s*,\s*|\s+/\s+")


def _code_refs(code: str, start: int) -> list[RawRef]:
    """References of one code span (taken literally); a single name that is nothing else may still
    exactly name a file or folder (``hertzbeat-collector-basic``). A list of names in one span
    (``ui.WizardField / WizardResult``, ``A, B``) gives each name's references (issue 23, item 2)."""
    if _NAME_LIST.fullmatch(code):
        out, at = [], 0
        for part in _LIST_SEP.split(code):
            at = code.index(part, at)
            out += _code_refs(part, start + at) if part.strip() else []
            at += len(part)
        return out
    out = _span_refs(code, start)
    if not out:
        bare = _bare(code.strip(), start)
        if bare is not None:
            out = [bare]
    return out


def _span_refs(code: str, start: int) -> list[RawRef]:
    c = code.strip()
    if not c or _URL.fullmatch(c):
        return []
    if _CODE_EXPR.match(c) and any(ch.isspace() for ch in c):  # an expression: its calls and qualified names
        return [r for r in code_line_refs(c) if r.kind == "symbol"]
    if any(ch.isspace() for ch in c):  # a command or a snippet: its path tokens
        c = _SHELL_COMMENT.split(c, maxsplit=1)[0]  # `pytest  # runs the tests`: the comment's words are prose
        out = []
        for m in _TOKEN.finditer(c):
            tok = m.group(0).rstrip(".:!?")
            var = _VAR_PATH.match(tok)
            if var:  # a path below a folder a variable holds: found by its tail
                out.append(RawRef("path", var.group(1), start + m.start() + tok.index("/") + 1, literal=False))
                continue
            url = _REPO_URL.match(tok)
            if url:  # a file of a repository on GitHub: this one's when it has it
                out.append(RawRef("path", url.group(1), start + m.start() + url.start(1), literal=False))
                continue
            if _HOME.fullmatch(tok) and "/" in tok:
                out.append(RawRef("path", tok, start + m.start(), outside=True))
                continue
            sel = re.match(r"^-Dtest=([A-Za-z_][\w.]*)#(\w+)$", tok)
            if sel:  # mvn -Dtest=org.acme.RuleTest#resolves: a test method
                out.append(RawRef("symbol", sel.group(1) + "#" + sel.group(2), start + m.start() + 7,
                                  symbol=sel.group(1).rsplit(".", 1)[-1] + "." + sel.group(2)))
                continue
            v = _VALUE.match(tok)  # --config=app.yml, TEST=x.test, --theirs/.beads/x.jsonl (a path glued to a flag)
            if v and "://" not in tok and ("/" in v.group(1) or looks_like_path(v.group(1))
                                           or _NAMED_FILE.fullmatch(v.group(1))) and \
                    not v.group(1).startswith(("/", "$", "-")) and re.search(r"[A-Za-z]", v.group(1)):
                out.append(RawRef("path", v.group(1), start + m.start() + v.start(1)))
                continue
            if tok.startswith(("-", "$", "~", "@")) or "=" in tok or "://" in tok:
                continue
            node = _NODE_ID.match(tok)
            if node and looks_like_path(node.group("path")):  # pytest tests/test_x.py::test_flush
                out += _node_refs(node, start + m.start())
                continue
            if _SNAKE.fullmatch(tok) and len(tok) > 5:  # cargo test test_local_kms_end_to_end: kept when defined
                out.append(RawRef("symbol", tok, start + m.start(), literal=False, symbol=tok))
            if _is_glob(tok) and ("/" in tok or tok.startswith("*")):
                out.append(RawRef("glob", tok, start + m.start()))
            elif ("/" in tok and re.search(r"[A-Za-z0-9_]", tok) and not _versionish(tok)
                  and not tok.startswith("/")) or looks_like_path(tok):
                out.append(RawRef("path", tok, start + m.start()))
            elif (bare := _bare(tok, start + m.start())) is not None:
                out.append(bare)
        return out
    if _HOME.fullmatch(c):
        return [RawRef("path", c, start, outside=True)]
    node = _NODE_ID.match(c)
    if node and looks_like_path(node.group("path")):
        return _node_refs(node, start)
    if c.startswith(("-", "$", "~", "@", "#")) or "=" in c or c.startswith("<"):
        return []
    if _SCOPED.fullmatch(c):  # Account::Entry, Provider::, crate::db::open()
        parts = [p for p in re.sub(r"\(\)$", "", c).split("::") if p and p not in ("crate", "self", "super")]
        return [RawRef("symbol", c, start, symbol=".".join(parts))] if parts else []
    m = _ENTRY_POINT.fullmatch(c)
    if m:  # src.sandbox.tools:bash_tool (a module and its attribute)
        mod, attr = m.group(1), m.group(2)
        return [RawRef("module", c, start, symbol=mod)] if "." in mod else [RawRef("symbol", c, start, symbol=attr)]
    if _is_glob(c):
        return [RawRef("glob", c, start)]
    if "/" in c:
        if not re.search(r"[A-Za-z0-9_]", c) or _versionish(c) or c.startswith("//"):
            return []
        segs = c.split("/")
        if len(segs) > 1 and all(re.fullmatch(r"[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{1,7}", seg) for seg in segs):
            # `grpc-cython-copts.patch/grpc-python.patch`: two files, not a file inside a file
            return [RawRef("path", seg, start + c.index(seg)) for seg in segs]
        return [RawRef("path", c, start)]
    if _VERSION.match(c):
        return []
    if looks_like_path(c):
        return [RawRef("path", c, start)]
    m = _IDENT_CALL.match(c)
    if not m:
        return []
    name, call = m.group(1), m.group(2) is not None
    parts = name.split(".")
    if len(parts) >= 2:
        if parts[0] in _RECEIVERS:
            return [RawRef("symbol", c, start, symbol=".".join(parts[1:]))]
        if call and _LOWER_ID.match(parts[0]) and not all(_LOWER_ID.match(p) for p in parts[:-1]):
            return [RawRef("symbol", c, start, symbol=".".join(parts[1:]))]
        if all(_LOWER_ID.match(p) for p in parts) and not call and len(parts[-1]) >= 2 and \
                parts[-1] not in FILE_EXTS:
            return [RawRef("module", c, start, symbol=name)]
        if call and _LOWER_ID.match(parts[0]):
            return [RawRef("symbol", c, start, symbol=".".join(parts[1:]))]  # obj.method(): a method
        out = [RawRef("symbol", c, start, symbol=name)]
        if call and len(parts) == 2 and _CAMEL.match(parts[0]) and parts[0][:1].islower():
            # mockIpcRenderer.invoke(): the object may be a name the code defines (a helper, a module const)
            out.append(RawRef("symbol", parts[0], start, literal=False, symbol=parts[0]))
        return out
    if name.isupper() and not call:  # an env var, or a constant: a reference only when it is defined
        return [RawRef("symbol", c, start, literal=False, symbol=name)] if len(name) > 2 and "_" in name else []
    if call or "_" in name.strip("_") or _CAMEL.match(name) or (name[:1].isupper() and any(
            ch.islower() for ch in name)):
        return [RawRef("symbol", c, start, symbol=name)]
    return []


def _node_refs(node: re.Match, start: int) -> list[RawRef]:
    """A test id ``tests/test_x.py::TestX::test_y``: the file, and the test it names (in that file)."""
    path, name = node.group("path"), node.group("name")
    parts = name.split("::")
    return [RawRef("path", path, start),
            RawRef("symbol", parts[-1], start + len(path) + 2, symbol=".".join(parts), owner=None)]


def _mark_placeholders(refs: list[RawRef]) -> list[RawRef]:
    for r in refs:
        r.placeholder = r.placeholder or bool(_PLACEHOLDER.search(r.target) or _PLACEHOLDER_CAMEL.match(r.target)
                                              or _PLACEHOLDER_CODE.search(r.target))
    return refs


def command_refs(command: str) -> list[RawRef]:
    """The references of one shell command line (a line of a fenced shell block, its prompt removed):
    its path and glob tokens by the code-span rules (``./scripts/x.sh``, ``./cmd/bd``, ``a.jsonl``; not
    URLs, flags, env assignments, absolute paths) plus bare tokens that exactly name an existing file
    or folder. Empty when no token looks like a path (a bare name alone does not make a line count):
    ``npm test`` names nothing."""
    if "`" in command:
        return []
    found = _mark_placeholders(_span_refs(command, 0))
    refs = [r for r in found if r.kind in ("path", "glob")]
    if any(not r.exact for r in refs) or any(r.kind == "symbol" and r.literal for r in found):
        return [r for r in found if r.kind in ("path", "glob") or r.literal]  # and a test a node id names
    # a line of bare names counts when one is a folder argument (``make -C turso-test-runner``,
    # ``cd web-app``) or a hyphenated/underscored name (``npm test`` still names nothing)
    return refs if any(re.search(r"(?:^|\s)(?:cd|-C|--cwd|--prefix|--dir|--manifest-path)\s+$", command[:r.start])
                       or re.search(r"[A-Za-z0-9][-_][A-Za-z0-9]", r.target) for r in refs) else []


_COMMENT = re.compile(r"(?:^|(?<=\s))(?:#(?![!\[{])|//|--\s)")
_STRING = re.compile(r"\"([^\"\\\n]{2,200})\"|'([^'\\\n]{2,200})'")
_DEFINITION = re.compile(
    r"^\s*(?:(?:export|pub(?:\([\w:]+\))?|public|private|protected|static|abstract|final|async|default|declare)\s+)*"
    r"(?:def|class|module|func|fn|type|interface|struct|enum|trait|function|impl|object|record)\s+"
    r"(?:\([^)]*\)\s*)?(?:self\.)?([A-Za-z_][\w]*(?:(?:::|\.)[A-Za-z_]\w*)*)")
_ASSIGNED = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*[^=]+)?=(?!=)")
_METHOD = re.compile(  # a method in a class body: "  private async saveTaskState() {" (indented, ends with "{")
    r"^\s+(?:(?:public|private|protected|static|async|override|readonly|abstract|final|synchronized)\s+)*"
    r"(?:[A-Za-z_][\w<>\[\],.?]*\s+)??([A-Za-z_$][\w$]*)\s*(?:<[^>()]*>)?\s*\([^()]*\)\s*"
    r"(?::\s*[^{};=]+?)?(?:\s+throws\s+[\w.,\s]+)?\s*\{\s*$")
_KWARG_VALUE = re.compile(r"(?<![\w.=!<>])[A-Za-z_]\w*\s*=\s*([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\s*(?=[,)]|$)")
_CODE_COMMENT = re.compile(r"^\s*(?:[A-Za-z_][\w.]*\s*(?:=(?!=)|\()|(?:def|class|fn|func|function|return|import)\s)")
_CODE_CALL = re.compile(r"(?<![\w.$:])((?:[A-Za-z_]\w*(?:\.|::))*([A-Za-z_]\w*))\s*\(")
_CODE_QUALIFIED = re.compile(r"(?<![\w.$:])([A-Za-z_]\w*(?:(?:::|\.)[A-Za-z_]\w*)+)(?![\w(])")
_ABSOLUTE = re.compile(r"^/(?:Users|home|tmp|etc|usr|var|opt)/")
_KEYWORDS = frozenset({"if", "for", "while", "switch", "catch", "return", "function", "def", "fn", "func",
                       "super", "print", "len", "range", "new", "typeof", "await", "assert", "require", "import"})


def code_line_refs(line: str) -> list[RawRef]:
    """The references of one line of a code block in a programming language (a memory file's example
    or snippet), each ``illustrative`` (an example when it resolves nowhere at the anchor):

    * a definition (``def sync_provider_rates(``, ``class Account::Entry``, ``func (s *S) Run(``,
      ``module ExchangeRate::Provided``, ``PROMPT_FILES: dict = {`` at column 0): its name;
    * string literals that name a path (``"prompt/prompt-subagent-myagent.md"``; ``"/Users/you/x"`` is
      outside the repository);
    * a comment: read as prose (:func:`find_refs`);
    * calls and qualified names (``parseCommand(``, ``platform.sendMessage(``, ``tools.BASH``,
      ``Provider::Registry.for_concept``): guesses, kept only when they are defined.
    """
    refs: list[RawRef] = []
    cm = None
    for m in _COMMENT.finditer(line):
        if line[:m.start()].count('"') % 2 == 0 and line[:m.start()].count("'") % 2 == 0:
            cm = m
            break
    code = line[:cm.start()] if cm else line
    if cm is not None:
        body = line[cm.end():]
        inner = next((m for m in _COMMENT.finditer(body) if m.start() > 0), None)
        if _CODE_COMMENT.match(body):  # commented-out code: "# prompt_builder=custom_prompt_builder,  # why"
            for r in code_line_refs(body[:inner.start()] if inner else body):
                r.start += cm.end()
                r.literal = True
                refs.append(r)
            body_at, body = (cm.end() + inner.end(), body[inner.end():]) if inner else (cm.end(), "")
        else:
            body_at = cm.end()
        for r in find_refs(body):
            r.start += body_at
            refs.append(r)
    taken: list[tuple[int, int]] = []
    for m in _STRING.finditer(code):
        value = m.group(1) or m.group(2)
        start = m.start() + 1
        taken.append((m.start(), m.end()))
        if _ABSOLUTE.match(value) and not any(ch.isspace() for ch in value):
            refs.append(RawRef("path", value, start, outside=True))
        elif not any(ch.isspace() for ch in value) and ("/" in value or looks_like_path(value)) and \
                not _URL.match(value) and re.search(r"[A-Za-z]", value):
            refs += [r for r in _span_refs(value, start) if r.kind in ("path", "glob")]
    code = "".join(" " if any(a <= k < b for a, b in taken) else ch for k, ch in enumerate(code))
    d = _DEFINITION.match(code)
    meth = None if d else _METHOD.match(code)
    if meth and meth.group(1) in _KEYWORDS | {"constructor", "else", "elif", "try", "finally", "do"}:
        meth = None
    if d:
        name = d.group(1)
        refs.append(RawRef("symbol", name, d.start(1), symbol=name.replace("::", ".")))
        taken = [(d.start(1), d.end(1))]
    elif meth:
        refs.append(RawRef("symbol", meth.group(1), meth.start(1), symbol=meth.group(1)))
        taken = [(meth.start(1), meth.end(1))]
    else:
        taken = []
        a = _ASSIGNED.match(code)
        if a and (a.group(1).isupper() or "_" in a.group(1)) and len(a.group(1)) > 2:
            refs.append(RawRef("symbol", a.group(1), 0, symbol=a.group(1)))
            taken = [(a.start(1), a.end(1))]
    for m in _CODE_CALL.finditer(code):
        full, last = m.group(1), m.group(2)
        if any(a <= m.start() < b for a, b in taken) or last in _KEYWORDS or not (
                "_" in last.strip("_") or _CAMEL.match(last)):
            continue  # a single word (t.Errorf(, err.Error(, Run() names too many things to be a reference
        parts = re.split(r"\.|::", full)
        if len(parts) > 1 and (parts[0] in _RECEIVERS or parts[0][:1].islower() and not parts[0].isupper()):
            refs.append(RawRef("symbol", last, m.start(2), literal=False, symbol=last))  # obj.method(): the method
        else:
            refs.append(RawRef("symbol", full, m.start(1), literal=False, symbol=".".join(parts)))
            if len(parts) > 1 and parts[-2][:1].isupper():  # Provider::Registry.for_concept(: the class too
                owner = full[:len(full) - len(last)].rstrip(".:")
                refs.append(RawRef("symbol", owner, m.start(1), literal=False, symbol=".".join(parts[:-1])))
        taken.append((m.start(1), m.end(1)))
    for m in _KWARG_VALUE.finditer(code):  # tool=custom_prompt_builder: a function passed by name
        if not any(a <= m.start(1) < b for a, b in taken):
            refs.append(RawRef("symbol", m.group(1), m.start(1), symbol=m.group(1)))
            taken.append((m.start(1), m.end(1)))
    for m in _CODE_QUALIFIED.finditer(code):
        if any(a <= m.start() < b for a, b in taken):
            continue
        full = m.group(1)
        parts = re.split(r"\.|::", full)
        if len(parts) == 2 and parts[0].islower() and parts[0] not in _RECEIVERS and parts[-1][:1].isupper() \
                and len(parts[-1]) >= 3 and not parts[-1].isupper():
            at = m.start(1) + len(parts[0]) + 1  # Go's test.CmdTest: the type CmdTest of package test
            refs.append(RawRef("symbol", parts[-1], at, literal=False, symbol=parts[-1]))
            continue
        if parts[0] in _RECEIVERS or len(parts[-1]) < 3 or not (
                parts[0][:1].isupper() or parts[-1].isupper() or "::" in full):
            continue  # obj.attr: a local, not a reference (testing.T: too short to tell)
        refs.append(RawRef("symbol", full, m.start(1), literal=False, symbol=".".join(parts)))
    for r in refs:
        r.illustrative = True
    refs.sort(key=lambda r: r.start)
    return _mark_placeholders(refs)


def find_refs(text: str, *, cells_literal: bool = False) -> list[RawRef]:
    """What ``text`` (one line or paragraph of Markdown) names, in order of appearance.
    ``cells_literal``: a single-token ``text`` is read as a code span (a table cell)."""
    refs: list[RawRef] = []
    work = text
    for m in _URL.finditer(work):
        url = _REPO_URL.match(m.group(0))
        if url:
            refs.append(RawRef("path", url.group(1), m.start() + url.start(1), literal=False))
        work = _mask(work, m.start(), m.end())
    for m in _HTML_TAG.finditer(work):  # "Extension Entry<br/>src/extension.ts" (a diagram's label)
        work = _mask(work, m.start(), m.end())
    for m in _WIKI.finditer(work):
        target = m.group(1).strip()
        if target:
            refs.append(RawRef("wiki", target, m.start(), link=True))
        work = _mask(work, m.start(), m.end())
    for m in _LINK.finditer(work):
        target = m.group(2).split("#", 1)[0].split("?", 1)[0]
        if target and not target.startswith(("mailto:", "tel:", "javascript:")):
            kind = "glob" if _is_glob(target) else "path"
            refs.append(RawRef(kind, target, m.start(2), link=True))
            label = m.group(1).strip().strip("`").rstrip("/")
            if label and "/" + label in "/" + _SCHEME.sub("", target).rstrip("/"):
                # [balance.rb](mdc:app/models/balance.rb): the text names the link's own target
                work = _mask(work, m.start(), m.end())
                continue
        work = _mask(work, m.start(2) - 1, m.end())  # keep the link text: it may hold code spans
    for m in _CODE_SPAN.finditer(work):
        found = _code_refs(m.group(2), m.start())
        if all(r.exact for r in found) and _LOWER_ID.fullmatch(m.group(2).strip()) and len(m.group(2).strip()) > 2:
            # a lowercase name: a method when a class named earlier in the line defines it (see _owners)
            method = RawRef("symbol", m.group(2).strip(), m.start(), literal=False, symbol=m.group(2).strip())
            method.owner = ""
            found = found + [method]
        refs += found
        work = _mask(work, m.start(), m.end())
    for m in _IMPORT.finditer(work):
        target = m.group(1).rstrip(".:!?")
        if "/" in target or looks_like_path(target):
            refs.append(RawRef("path", target, m.start(), link=True))
        work = _mask(work, m.start(), m.end())
    stripped = work.strip()
    if cells_literal and stripped and not any(ch.isspace() for ch in stripped):
        start = work.index(stripped)
        refs += _code_refs(stripped.rstrip(".,;:"), start)
        work = ""
    taken: list[tuple[int, int]] = []
    for m in _BOLD_SPAN.finditer(work):  # a bold label "**hertzbeat-manager**:" (a path token stays a path)
        name = m.group(1) or m.group(2)
        if "/" not in name and not looks_like_path(name.rstrip(".:,!?")):
            label = name.rstrip(".:,!?")
            if re.fullmatch(r"[A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*", label) and _CAMEL.match(label):
                # "**DownloadsWatchdog**: ..." names a class: kept when it is defined (browser-use's CLAUDE.md)
                refs.append(RawRef("symbol", label, m.start(), literal=False, symbol=label))
            bare = _bare(name, m.start())
            if bare is not None:
                refs.append(bare)
                taken.append((m.start(), m.end()))
    for m in _CALL.finditer(work):
        name = m.group(1)
        parts = name.split(".")
        sym = ".".join(parts[1:]) if len(parts) > 1 and (parts[0] in _RECEIVERS or _LOWER_ID.match(parts[0])) else name
        refs.append(RawRef("symbol", name + "()", m.start(), symbol=sym))
        taken.append((m.start(), m.end()))
    for m in _DOTTED_CLASS.finditer(work):
        if any(a <= m.start() < b for a, b in taken) or m.group(1).rsplit(".", 1)[-1].casefold() in FILE_EXTS:
            continue
        refs.append(RawRef("symbol", m.group(0), m.start(), literal=False, symbol=m.group(1)))
        taken.append((m.start(), m.end()))
    for m in _PLAIN_CAMEL.finditer(work):
        if not any(a <= m.start() < b for a, b in taken):
            refs.append(RawRef("symbol", m.group(1), m.start(), literal=False, symbol=m.group(1)))
    for m in _TOKEN.finditer(work):
        tok = _unemphasize(m.group(0))
        if not tok or tok.startswith(("-", "$", "~", "@", "#")) or "=" in tok or any(a <= m.start() < b for a, b in taken):
            continue
        node = _NODE_ID.match(tok)
        if node and looks_like_path(node.group("path")):
            refs += _node_refs(node, m.start())
            continue
        if _FOLDER_WORD.match(work, m.end()) and (bare := _bare(tok, m.start())) is not None:
            refs.append(bare)  # "inside the src folder": a folder, when it names one exactly
            continue
        if _is_glob(tok):
            refs.append(RawRef("glob", tok, m.start()))
        elif "/" in tok:
            if not re.search(r"[A-Za-z0-9_]", tok) or _versionish(tok):
                continue
            explicit = tok.endswith("/") or looks_like_path(tok) or tok.startswith(("./", "../")) or (
                tok.split("/", 1)[0] in _TOP_DIRS and (tok.count("/") >= 2 or re.search(r"[-_.\d]", tok.split("/", 1)[1])))
            refs.append(RawRef("path", tok, m.start(), literal=bool(explicit)))
        elif looks_like_path(tok) and not tok.startswith("."):
            refs.append(RawRef("path", tok, m.start()))
        elif _BARE_WORD.fullmatch(tok) and re.search(r"[A-Za-z0-9][-_][A-Za-z0-9]", tok):
            bare = _bare(tok, m.start())
            if bare is not None:
                refs.append(bare)
    for m in _HOME_PROSE.finditer(work):
        refs.append(RawRef("path", m.group(1).rstrip(".:,;!?"), m.start(1), outside=True))
    refs.sort(key=lambda r: r.start)
    _owners(refs)
    for r in refs:
        r.example = example_before(text, r.start)
        r.placeholder = bool(_PLACEHOLDER.search(r.target) or _PLACEHOLDER_CAMEL.match(r.target)
                             or _PLACEHOLDER_CODE.search(r.target))
    return refs


_HOME_PROSE = re.compile(r"(?:^|(?<=[\s(]))(~/[^\s`'\"()]+)")


def _unemphasize(tok: str) -> str:
    """A prose token without the emphasis and punctuation around it: ``**Core``, ``Extension**:``,
    ``(see``, ``_note_`` lose them; ``__init__.py`` keeps its underscores."""
    prev = None
    while tok != prev:
        prev = tok
        tok = tok.lstrip("(*").rstrip(".:!?,*")
        if len(tok) > 2 and tok[0] == "_" and tok[-1] == "_":
            tok = tok.strip("_")
    return tok
_PASCAL = re.compile(r"[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*")


def _owners(refs: list[RawRef]) -> None:
    """Give each method-like symbol (a single lowercase or camelCase name) the class a code span named
    before it in the line (`` `SandboxProvider` manages `acquire`, `release` ``; `` `Mode` interface with
    `prepare()` ``): the resolver tries ``Class.name`` first. A bare lowercase word (``owner == ""``
    from :func:`find_refs`) without such a class is not a reference, unless a file was named before it
    (`` [synth.rb](mdc:app/models/provider/synth.rb) provider has a `usage` method ``): then it is a name
    that file defines, when it does (``in_file``)."""
    owner = None
    files = [r.target for r in refs if r.kind == "path" and not r.exact and looks_like_path(r.target)]
    in_file = None
    keep = []
    for r in refs:
        if r.kind == "path" and not r.exact and looks_like_path(r.target):
            in_file = r.target
        if r.kind == "symbol" and r.symbol and "." not in r.symbol:
            if _PASCAL.fullmatch(r.symbol) and r.literal:
                owner = r.symbol
            elif not r.symbol[:1].isupper():
                if r.owner == "" and owner is None:
                    if in_file is None and not files:
                        continue
                    r.in_file = in_file or files[0]  # "the `log` class from `log.ts`": a file named after it
                r.owner = owner
        keep.append(r)
    refs[:] = keep


@dataclass
class Where:
    """Where a line sits: the folders it implies, in resolution order."""

    heading: tuple[str, ...] = ()  # folders named by the enclosing headings / lead-ins (innermost last)
    file_dir: str = ""  # the memory file's folder
    module_dir: str = ""  # the folder the memory file is about (its scope)
    own: str | None = None  # the memory file itself (never a reference)
    soft: tuple[str, ...] = ()  # folders a heading's word names ("Go Guidelines" -> go), tried after the root


@dataclass
class RefResolver:
    """Resolves :class:`RawRef` against the files of the repository at ``head``.

    ``definitions(names) -> {name: [(path, start, end, span_hash)]}``: the symbol index at ``head``."""

    files: set[str]
    head: str
    definitions: Callable[[list[str]], dict[str, list[tuple[str, int, int, str | None]]]]
    max_per_symbol: int = 3  # files; a name defined in more is kept once, without a path
    folders: set[str] = field(init=False)
    _by_name: dict[str, list[str]] = field(init=False)
    _defs: dict[str, list[tuple[str, int, int, str | None]]] = field(init=False)

    def __post_init__(self) -> None:
        self.folders = set()
        self._by_name = {}
        for f in self.files:
            parts = f.split("/")
            for i in range(1, len(parts)):
                self.folders.add("/".join(parts[:i]))
            self._by_name.setdefault(parts[-1], []).append(f)
        for d in self.folders:
            self._by_name.setdefault(d.rsplit("/", 1)[-1], []).append(d)
        self._defs = {}

    def is_folder(self, path: str) -> bool:
        return path.strip("/") in self.folders

    def prefetch(self, refs: Iterable[RawRef]) -> None:
        """Look the symbols of ``refs`` up in one batch."""
        refs = list(refs)
        names = {r.symbol for r in refs if r.symbol and r.kind in ("symbol", "module")}
        names |= {f"{r.owner}.{r.symbol}" for r in refs if r.owner and r.symbol}
        names = sorted(names - set(self._defs))
        if names:
            found = self.definitions(names)
            for n in names:
                self._defs[n] = list(found.get(n, ()))

    def _defs_of(self, name: str) -> list[tuple[str, int, int, str | None]]:
        if name not in self._defs:
            self.prefetch([RawRef("symbol", name, 0, symbol=name)])
        return self._defs[name]

    @staticmethod
    def _norm(base: str, target: str) -> str | None:
        p = posixpath.normpath(posixpath.join(base, target)) if base else posixpath.normpath(target)
        if p.startswith("..") or p in (".", ""):
            return None
        return p

    def bases(self, ref: RawRef, where: Where) -> list[str]:
        heading = list(where.heading)
        joined = [posixpath.join(*heading[:i + 1]) for i in range(len(heading))] if heading else []
        order = ([where.file_dir] if ref.link else []) + list(ref.bases) + list(reversed(joined)) + \
            list(reversed(heading)) + [where.file_dir, where.module_dir, ""] + list(reversed(where.soft))
        return list(dict.fromkeys(order))

    def heading_folders(self, headings: Iterable[str], near: Iterable[str]) -> tuple[str, ...]:
        """Folders the words of ``headings`` name ("Go Guidelines" -> ``go``, "Python SDK" -> ``python``):
        a word (two letters or more) equal, ignoring case, to the name of a folder directly under one of
        ``near`` (the repository root, the memory file's folder)."""
        out = []
        for h in headings:
            for word in re.findall(r"[A-Za-z][\w-]+", h or ""):
                for base in near:
                    for d in sorted({*self._by_name.get(word, ()), *self._by_name.get(word.casefold(), ())}):
                        if d in self.folders and posixpath.dirname(d) == base:
                            out.append(d)
        return tuple(dict.fromkeys(out))

    def resolve_path(self, target: str, bases: list[str], *, folder: bool = False,
                     suffix: bool = True) -> tuple[str, bool] | None:
        """(repository path, is a folder) for ``target`` tried under each base, then (``suffix``) as a
        unique suffix."""
        t = target.strip()
        if t.startswith("mdc:"):  # a Cursor rule's link: from the repository root
            t = "/" + t[4:]
        t = _SCHEME.sub("", t)
        rooted = t.startswith("/")
        t = t.lstrip("/")
        while t.startswith("./"):
            t = t[2:]
        t = t.rstrip("/")
        if not t:
            return None
        for base in ([""] if rooted else bases):
            p = self._norm(base, t)
            if p is None:
                continue
            if not folder and p in self.files:
                return p, False
            if p in self.folders:
                return p, True
        if re.match(r"\.[A-Za-z]", t) and not rooted and "/" in t:  # `.src/utils/`, written for `./src/utils/`
            fixed = self.resolve_path(t[1:], bases, folder=folder, suffix=False)
            if fixed is not None and not any(self._norm(b, t.split("/", 1)[0]) in self.folders for b in bases):
                return fixed
        if t.startswith("../") or t == ".." or not suffix:
            return None
        tail = posixpath.normpath(t)
        hits = [p for p in self._by_name.get(tail.rsplit("/", 1)[-1], ())
                if (p == tail or p.endswith("/" + tail)) and (not folder or p in self.folders)]
        if len(hits) == 1:
            return hits[0], hits[0] in self.folders
        return None

    def _implied(self, ref: RawRef, where: Where) -> str:
        """The folder an unresolved relative reference most plausibly lives in."""
        if ref.bases:
            return ref.bases[0]
        if ref.link:
            return where.file_dir
        for h in reversed(where.heading):
            if h in self.folders:
                return h
        return where.heading[-1] if where.heading else where.module_dir

    def _plausible(self, target: str, ref: RawRef, where: Where) -> str:
        t = target.strip()
        if t.startswith("mdc:"):
            t = "/" + t[4:]
        t = _SCHEME.sub("", t)
        if t.startswith("/"):
            return posixpath.normpath(t.lstrip("/")) or t
        while t.startswith("./"):
            t = t[2:]
        p = self._norm(self._implied(ref, where), t.rstrip("/"))
        return p if p is not None else posixpath.normpath(t.rstrip("/"))

    def evidence(self, ref: RawRef, where: Where) -> list[dict]:
        """The evidence dictionaries of one reference (empty: not a reference after all, e.g. a prose
        guess that resolves nowhere, or the memory file itself)."""
        bases = self.bases(ref, where)
        out: list[dict] = []

        def add(type_: str, path: str | None, example: bool, **extra) -> None:
            ev = {"type": type_, "ref": "example" if example else "mention", "target": ref.target, "path": path}
            if not example:
                ev["commit_sha"] = self.head
            ev.update(extra)
            out.append(ev)

        if ref.kind == "glob":
            t = _SCHEME.sub("", ref.target)
            rooted = t.startswith("/")
            t = t.lstrip("/").removeprefix("./")
            rx = glob_regex(t)
            chosen = None
            for base in ([""] if rooted else bases):
                prefix = base + "/" if base else ""
                if any(f.startswith(prefix) and rx.match(f[len(prefix):]) for f in self.files):
                    chosen = prefix + t
                    break
            if chosen is None and not (rooted or ref.illustrative):
                chosen = self._glob_by_suffix(t)
            if chosen is None:
                implied = "" if ref.target.startswith("/") else self._implied(ref, where)
                chosen = (implied + "/" if implied else "") + t.removeprefix("./")
            add("glob", chosen, ref.example or ref.placeholder)
            return out
        if ref.kind == "wiki":
            hit = self._wiki(ref.target, where)
            if hit is not None and hit == where.own:
                return []
            path = hit or self._plausible(ref.target + ".md", ref, where)
            add("file_span", path, ref.example or (ref.placeholder and hit is None))
            return out
        if ref.outside:  # a home-folder path: held as written, never checked against the repository
            out.append({"type": "folder" if ref.target.endswith("/") else "file_span",
                        "ref": "example" if ref.example else "mention", "target": ref.target, "path": ref.target})
            return out
        if ref.kind == "path":
            want_folder = ref.target.endswith("/")
            hit = self.resolve_path(ref.target, bases, folder=want_folder, suffix=not (ref.exact or ref.illustrative))
            if hit is None and not ref.literal:
                return []
            # a real path after "e.g." is a reference (issue 23): only a name the tree lacks is an example
            example = (ref.example or ref.placeholder or ref.illustrative) and hit is None
            if hit is not None:
                add("folder" if hit[1] else "file_span", hit[0], example)
            else:
                add("folder" if want_folder else "file_span", self._plausible(ref.target, ref, where), example)
            return out
        if ref.kind == "module":
            parts = ref.symbol.split(".")
            for cand in ("/".join(parts) + ".py", "/".join(parts) + "/__init__.py", "/".join(parts) + ".pyi"):
                hit = self.resolve_path(cand, bases + ["src"])
                if hit is not None and not hit[1]:
                    add("file_span", hit[0], ref.example)
                    return out
        # symbols (and dotted names that are not a module file)
        symbol = ref.symbol or ref.target
        if ref.owner and self._defs_of(f"{ref.owner}.{symbol}"):
            symbol = f"{ref.owner}.{symbol}"  # a method of the class the line named before it
        defs = self._defs_of(symbol)
        if ref.in_file is not None:  # a method of the file the line named before it: defined there, or nothing
            named = self.resolve_path(ref.in_file, bases, suffix=not ref.illustrative)
            defs = [d for d in defs if named is not None and d[0] == named[0]]
        if not defs and not ref.literal:
            return []
        example = ref.example or ((ref.placeholder or ref.illustrative) and not defs)
        if defs and len({d[0] for d in defs}) <= self.max_per_symbol:
            for path, start, end, h in defs:
                extra = {"symbol": symbol, "line_start": start, "line_end": end}
                if h:
                    extra["span_hash"] = h
                add("symbol", path, example, **extra)
        elif defs:  # defined in many files: no path kept, but the line named something that existed
            files = sorted({d[0] for d in defs})
            add("symbol", None, example, symbol=symbol,
                excerpt=f"defined in {len(files)} files: " + ", ".join(files[:3]) + (", ..." if len(files) > 3 else ""))
        else:
            add("symbol", None, example, symbol=symbol)
        return out

    def _glob_by_suffix(self, pattern: str) -> str | None:
        """``pattern`` rooted at the one folder ending with its literal folder part that holds a match
        (``classpath:db/migration/{vendor}`` -> ``app/src/main/resources/db/migration/{vendor}``)."""
        segs = pattern.split("/")
        lit = []
        for seg in segs[:-1]:
            if _GLOB_CHARS.search(seg):
                break
            lit.append(seg)
        if not lit:
            return None
        head, rest = "/".join(lit), "/".join(segs[len(lit):])
        rx = glob_regex(rest)
        hits = [d for d in self._by_name.get(lit[-1], ()) if d in self.folders and d.endswith("/" + head)
                and any(f.startswith(d + "/") and rx.match(f[len(d) + 1:]) for f in self.files)]
        return f"{hits[0]}/{rest}" if len(hits) == 1 else None

    def _wiki(self, name: str, where: Where) -> str | None:
        base = name.strip().strip("/")
        names = [base] if base.casefold().endswith((".md", ".mdx")) else [base + ".md", base + ".mdx"]
        for n in names:
            for folder in (where.file_dir, ""):
                p = self._norm(folder, n)
                if p is not None and p in self.files:
                    return p
        hits = sorted({p for n in names for p in self._by_name.get(n.rsplit("/", 1)[-1], ())
                       if p in self.files and (p == n or p.endswith("/" + n))})
        if not hits:
            return None

        def closeness(p: str) -> tuple[int, int, str]:
            common = posixpath.commonpath([p, where.file_dir or "."]) if where.file_dir else ""
            return (-len(common.split("/")) if common else 0, p.count("/"), p)

        return min(hits, key=closeness)

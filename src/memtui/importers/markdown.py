"""Markdown instruction files agents read, as candidates (issue 5, "Import" item 1).

Files: ``CLAUDE.md``, ``CLAUDE.local.md``, ``AGENTS.md`` (nested ones too), ``.claude/rules/*.md``
(front matter ``paths``), ``.cursor/rules/*.mdc`` (front matter ``description``, ``globs``,
``alwaysApply``), ``.clinerules`` (a file or a folder), ``memory-bank/*.md``, GitHub Copilot
instructions (``applyTo``), ``.cursorrules``/``.windsurfrules``/``GEMINI.md``, any other
Markdown file given, and a Claude auto-memory folder (``MEMORY.md`` index plus topic files with
front matter ``name``/``description``/``type``). A folder given is searched for these files.

Each bullet or paragraph that states something or names something becomes a candidate; a list
under a lead-in line ("Key directories:") keeps its subject ("Key directories: `src/api/` — HTTP
handlers"); each table body row is one candidate ("Column: cell; ..."); each entry of a fenced
directory tree (``├──``/``└──`` or indentation, in a ``text`` or unlabelled fence) is one candidate
naming its path; each line of a fenced shell block (``bash``, ``sh``, ``shell``, ``zsh``, ``console``, or
unlabelled when every line looks like a command) that names a path (``./scripts/bump.sh 0.2.0``,
``go build ./cmd/bd``; :func:`memtui.importers.refs.command_refs`) is one candidate, the command in a
code span after its lead-in's or nearest heading's subject (``Release: `go build ./cmd/bd```); a
comment line there is prose. Each line of a block in another language (or a ``text`` block that is no
tree) that names something :func:`memtui.importers.refs.code_line_refs` accepts is one candidate the
same way (a line whose only names are calls defined nowhere is skipped); a diagram (``mermaid``,
``plantuml``, ``dot``, ...) is read as prose, a config block (``yaml``, ``toml``, ...) also for its unquoted
path values; other lines stay skipped as "code block". The entries of a list of bare names under a
lead-in, and the classes of a diagram, are held even where one resolves nowhere when at least two and
half of the others resolve (``audit-logger`` among the crates: it never existed). A heading that names a reference (a code span or path the rules of
:mod:`memtui.importers.refs` accept without checking the checkout: ``### Phase 2 (`base-action/`)``)
is a candidate too (its own line, its references; it still gives its folder to the lines below, not to
itself); other headings are context only. Every other line is listed in ``Parsed.skipped`` with why (heading, blank, code
block, code fence, table header, lead-in, prose with nothing to check, ...). Code spans are kept
exactly as written. Its evidence is that file span (its own lines):

* inside the repository and identical to the file at HEAD: ``file_span`` at HEAD with
  ``lines`` and ``span_hash`` (docs/record-format.md), path relative to the repository root;
* inside the repository but uncommitted (changed or untracked): ``file_span`` with path and
  lines but no commit (revalidation cannot check it) and the tag ``uncommitted``; commit and
  import again to anchor it (the candidate's evidence is then refreshed);
* outside the repository (a Claude auto-memory folder lives in ``~/.claude``): ``doc`` evidence
  naming the file and lines, no commit.

References the text names (:mod:`memtui.importers.refs`: paths, folders, globs, symbols, Markdown
and wiki links) become extra evidence, one dictionary each (at most ``MAX_MENTIONS`` a line):
``type`` (``file_span``, ``folder``, ``glob`` or ``symbol``), ``ref`` (``mention``, or ``example``
for a placeholder, which gets no commit and is never checked), ``target`` (as written),
``path`` (repository-relative at HEAD; for an unresolved reference the most plausible literal path;
None for a symbol defined nowhere or in more than three files), ``commit_sha`` (HEAD), and for a
found symbol ``symbol``, ``line_start``, ``line_end``, ``span_hash``. Paths resolve under the
enclosing heading's, lead-in's or parent bullet's folder (``- **hertzbeat-collector**: ...`` for
its nested bullets), a fenced tree's root, the file's folder, its scope folder, the repository root,
a folder a heading's word names ("Go Guidelines" -> ``go/``), then as a unique suffix of the
checkout's files and folders. Unresolved
references are kept: maintenance reports them as unresolvable.

Scope: the repository (``repository_id``), narrowed to the file's folder (a nested
``services/billing/AGENTS.md`` has module path ``services/billing``; for ``.cursor/rules``,
``.claude/rules``, ``.clinerules``, ``memory-bank`` and ``.github`` the folder holding them);
``globs``/``paths``/``applyTo`` become ``applies_to``; ``description`` and ``alwaysApply`` are
kept as tags. Headings become ``section:<slug>`` tags and choose the type (``## Testing`` ->
``test_convention``, ``## Commands`` -> ``runbook``, ...; else the file's kind, else
``repo_convention`` for an instruction, ``code_fact`` for a statement).

``@path`` imports (outside code) are followed, at most 5 deep, only to files inside the
repository (or, without one, inside the importing file's folder); the imported file's
candidates get the importer's scope and the tag ``imported-by:<file>``. An import leaving that
boundary is reported as a warning and not read.

In an auto-memory folder, a later line that corrects an earlier one of the same file wins: the
earlier one is imported as ``superseded`` (``superseded_by`` the later one; an earlier import of
it still ``candidate`` is moved to ``superseded``), so its text stays auditable but is never
recalled (choice: supersede rather than skip). A later line corrects an earlier one when both
state the same setting ("Key: X" / "Key: Y"; "The test command is `X`" / "... is `Y`" with the same
subject and verb, values that are code spans or numbers, or the later line marked as a correction),
or when the later line carries a correction marker ("Correction:", "Actually", "no longer",
"instead of", "now uses", ...) and shares the most content words with the earlier one (at least
two, or half). Two different facts about one subject ("The staging database is called `x`" /
"The staging database is reset nightly") are not a correction.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable

import yaml

from memtui.domain.spans import span_hash, split_lines
from memtui.importers.reader import ImportFileError
from memtui.importers.records import (ImportContext, Item, Parsed, norm_text, read_text, record_error, tag,
                                      type_for_label)
from memtui.importers.line_types import type_for_line
from memtui.importers.refs import _CODE_SPAN as _RCODE
from memtui.importers.refs import (_URL, RawRef, RefResolver, Where, _span_refs, code_line_refs, command_refs,
                                   find_refs, looks_like_path)

__all__ = ["parse_markdown", "split_blocks", "Block", "find_corrections", "MAX_IMPORT_DEPTH"]

MAX_IMPORT_DEPTH = 5
MAX_MENTIONS = 24
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", "target",
                        ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".idea", ".vscode"})
_HIDDEN_OK = frozenset({".claude", ".cursor", ".clinerules", ".github"})
_FOLLOW_SUFFIXES = frozenset({".md", ".mdc", ".markdown", ".txt", ""})
_CONFIG_DIRS = (".cursor", ".claude", ".clinerules", "memory-bank", ".github")
_MEMORY_TYPES = {"user": "user_preference", "feedback": "repo_convention", "project": "code_fact",
                 "reference": "code_fact"}
_BANK_TYPES = {"projectbrief": "code_fact", "productcontext": "code_fact", "techcontext": "code_fact",
               "systempatterns": "architecture_decision", "activecontext": "task", "progress": "task"}
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_IMPORT = re.compile(r"(?:^|(?<=[\s(]))@([^\s)\]`'\",;]+)")


# -- blocks ----------------------------------------------------------------------------------------

@dataclass
class Block:
    """A bullet, paragraph, table body row, fenced-tree entry or heading naming a reference: its text parts, 1-based inclusive
    lines, the headings above it and the lead-in labels ("Key directories:") it is nested under.

    ``dirs``: the folders the enclosing headings and lead-ins name (``### API (api/)``), outermost
    first, each with whether it was written explicitly as a folder (a code span, ``x/``, ``(x)``);
    ``refs``: the references of a table row or tree entry (computed from its structure; None for
    bullets and paragraphs, whose references are read from the text); ``lead``: the block ends in
    ":" and introduces what follows."""

    kind: str
    parts: list[str]
    start: int
    end: int
    headings: tuple[str, ...]
    labels: tuple[str, ...]
    indent: int = 0
    levels: tuple[int, ...] = ()  # the level of each of ``headings``
    dirs: tuple[tuple[str, bool], ...] = ()
    refs: list[RawRef] | None = None
    lead: bool = False
    parent: str | None = None  # the subject of the bullet it is nested under, when that is no lead-in

    @property
    def text(self) -> str:
        return re.sub(r"\s+", " ", " ".join(self.parts)).strip()


_BULLET = re.compile(r"^(\s*)([-*+•]|\d{1,3}[.)])\s+(.*)$")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([^\s`{]*)")
_HR = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_CHECKBOX = re.compile(r"^\[[ xX]\]\s+")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_TREE_PREFIX = re.compile(r"^[\s│├└─┬┼┃┣┗━╰╭┊┆╎|`+\\-]*")
_TREE_CHARS = re.compile(r"[│├└─┬┼┃┣┗━╰╭]|(?:^|\s)[|`+][-─]{1,}")
_TREE_ENTRY = re.compile(r"^(?P<name>`?(?:[\w.@+()\[\]$*-]|<[\w-]+>)(?:[\w.@+()\[\]$*/-]|<[\w-]+>)*/?`?|\.{1,2}/?)"
                         r"(?:\s+(?:#|//|--|—|–|->|<-|←|:|-)\s*(?P<c1>.*)|(?<=/)#\s*(?P<c3>.*)|\s{2,}(?P<c2>\S.*))?\s*$")
_TREE_FENCES = frozenset({"", "text", "txt", "tree", "plain", "plaintext", "none", "ascii", "dir", "directory",
                          "filetree", "files", "structure", "md", "markdown"})
_LEAD_NAME = re.compile(r"^(?:\*\*([\w.@-][\w.@/-]*)\*\*|`([\w.@-][\w.@/-]*)`)\s*:?(?:\s|$)")
_LEAD_END = re.compile(r":\s*(?:\*\*|__|\*|_)?\s*$")


def _lead_label(text: str) -> str | None:
    """The subject of a lead-in line ("**Key directories:**" -> "Key directories"), or None."""
    if not _LEAD_END.search(text):
        return None
    label = _LEAD_END.sub("", text).strip()
    label = re.sub(r"^(\*\*|__)(.*)$", r"\2", label).strip()
    label = re.sub(r"(\*\*|__)$", "", label).strip()
    return label or None


def _folder_hint(text: str) -> tuple[str, bool] | None:
    """The folder a heading or lead-in names: a code span, a ``(folder)`` or a ``folder/`` token
    (explicit), else a ``a/b`` token (to be confirmed by the checkout)."""
    spans = [m.group(2).strip() for m in _RCODE.finditer(text)]
    for s in spans:
        if s and not any(c.isspace() for c in s) and not looks_like_path(s) and re.search(r"\w", s) and \
                ("/" in s or re.fullmatch(r"[\w.-]+", s) and "." not in s) and not s.startswith(("-", "$", "@")):
            if "/" in s or s.endswith("/") or not s[:1].isupper():
                return s.strip("/").removeprefix("./") or None, True
    plain = _RCODE.sub(" ", text)
    for m in re.finditer(r"\(\s*`?([\w.@-][\w.@/-]*)`?\s*\)", plain):
        tok = m.group(1)
        if "/" in tok and not looks_like_path(tok):
            return tok.strip("/").removeprefix("./"), True
    for tok in re.findall(r"[\w.@-][\w.@/-]*/(?=[\s),:;]|$)", plain):
        if not looks_like_path(tok.rstrip("/")):
            return tok.strip("/").removeprefix("./"), True
    for tok in re.findall(r"(?<![\w/])[\w.@-]+/[\w.@/-]*[\w@-](?![\w/])", plain):
        if not looks_like_path(tok):
            return tok.strip("/"), False
    return None


def _split_row(line: str) -> list[str]:
    """The cells of a table row (pipes inside code spans or escaped do not split)."""
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    cells, cur, in_code = [], "", False
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s) and s[i + 1] == "|":
            cur += "|"
            i += 2
            continue
        if c == "`":
            in_code = not in_code
        if c == "|" and not in_code:
            cells.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    cells.append(cur.strip())
    return cells


@dataclass
class _Entry:
    offset: int
    col: int
    name: str
    comment: str
    full: str = ""
    is_dir: bool = False


def _tree_paths(entries: list[_Entry]) -> None:
    """Fill in each entry's path (through its parents, by indentation) and whether it is a folder."""
    stack: list[tuple[int, str]] = []
    for i, e in enumerate(entries):
        while stack and stack[-1][0] >= e.col:
            stack.pop()
        nxt = entries[i + 1] if i + 1 < len(entries) else None
        e.is_dir = e.name.endswith("/") or (nxt is not None and nxt.col > e.col)
        parent = "/".join(n for _, n in stack)
        name = e.name.strip("/")
        e.full = (parent + "/" + name if parent else name) + ("/" if e.is_dir else "")
        if e.is_dir:
            stack.append((e.col, name))


def _tree(lines: list[str]) -> list[_Entry] | None:
    """The entries of a fenced directory tree, or None when the block is not one."""
    entries: list[_Entry] = []
    nonblank = other = 0
    drawn = slashed = False
    for off, raw in enumerate(lines):
        line = raw.rstrip("\n").rstrip("\r").expandtabs(4)
        if not line.strip():
            continue
        nonblank += 1
        prefix = _TREE_PREFIX.match(line).group(0)
        rest = line[len(prefix):]
        if _TREE_CHARS.search(prefix):
            drawn = True
        if rest.strip() in ("...", "…", "etc", "etc."):
            continue
        m = _TREE_ENTRY.match(rest)
        if not m:
            other += 1
            continue
        name = m.group("name").strip("`")
        if name.endswith("/"):
            slashed = True
        entries.append(_Entry(off, len(prefix), name, (m.group("c1") or m.group("c2") or m.group("c3") or "").strip()))
    if len(entries) < 2 or other > nonblank * 0.2 or not (drawn or slashed):
        return None
    _tree_paths(entries)
    return entries


def split_blocks(lines: list[str], first_line: int = 1, skipped: list[tuple[int, str]] | None = None,
                 repo_names: Iterable[str] = ()) -> list[Block]:
    """Bullets, paragraphs, table body rows and fenced-tree entries of Markdown ``lines`` (the first is
    line ``first_line``). Headings become the blocks' ``headings``; lines that are not part of a block
    are appended to ``skipped`` as (line, why): blank, heading, rule, code fence, code block, HTML
    comment, table header, table separator, tree root. ``repo_names``: names a tree root may give
    the repository itself."""
    blocks: list[Block] = []
    headings: list[tuple[int, str, tuple[str, bool] | None]] = []
    bullets: list[list] = []  # [indent, label or None, folder hint]
    cur: Block | None = None
    last_blank = True
    roots = {n.casefold() for n in repo_names if n} | {".", ""}
    skip = skipped if skipped is not None else []

    def ctx(extra_indent: int | None = None) -> dict:
        dirs = tuple(h for _, _, h in headings if h) + tuple(
            d for b in bullets for d in ((b[2],) if b[1] and b[2] else ()) + ((b[3],) if len(b) > 3 and b[3] else ()))
        near = bullets[-1] if bullets else None
        parent = near[4] if near is not None and not near[1] and len(near) > 4 else None
        return {"headings": tuple(t for _, t, _ in headings), "labels": tuple(b[1] for b in bullets if b[1]),
                "levels": tuple(lv for lv, _, _ in headings), "dirs": dirs, "parent": parent}

    def close() -> None:
        nonlocal cur
        if cur is None:
            return
        blocks.append(cur)
        label = _lead_label(cur.text) if cur.kind in ("bullet", "para") else None
        if label is not None:
            cur.lead = True
            hint = _folder_hint(label)
            if cur.kind == "bullet" and bullets:
                bullets[-1][1], bullets[-1][2] = label, hint
            elif cur.kind == "para":
                bullets.append([-1, label, hint])
        cur = None

    def block(kind: str, parts: list[str], start: int, end: int, indent: int = 0, refs=None) -> Block:
        c = ctx()
        return Block(kind, parts, start, end, c["headings"], c["labels"], indent, c["levels"], c["dirs"], refs,
                     parent=c["parent"] if kind == "bullet" else None)

    def heading_block(text: str, start: int, end: int, level: int) -> None:
        """Push the heading; it is a block of its own when it names a reference (its folder is context
        for the lines below it, not for itself)."""
        parent_dirs = ctx()["dirs"]
        headings.append((level, text, _folder_hint(text)))
        refs = [r for r in find_refs(text) if r.literal and not r.exact]
        if refs:
            b = block("heading", [text], start, end)
            b.dirs = parent_dirs
            blocks.append(b)
        else:
            skip.extend((k, "heading") for k in range(start, end + 1))

    n_lines = len(lines)
    i = 0
    while i < n_lines:
        n = i + first_line
        line = lines[i].rstrip("\n").rstrip("\r")
        stripped = line.strip()
        m = _FENCE.match(line)
        if m:
            close()
            fence, info = m.group(1), m.group(2).casefold()
            j = i + 1
            while j < n_lines:
                s = lines[j].strip()
                if s.startswith(fence[0] * len(fence)) and set(s) == {fence[0]}:
                    break
                j += 1
            body = lines[i + 1:j]
            skip.append((n, "code fence"))
            if not (blocks and blocks[-1].lead):
                bullets.clear()
            entries = _tree(body) if info in _TREE_FENCES else None
            if entries is None and (info in _SHELL_FENCES or (not info and _all_commands(body))):
                _command_blocks(body, i + 1 + first_line, info, block, blocks, skip)
            elif entries is None:
                _code_blocks(body, i + 1 + first_line, info, block, blocks, skip)
            else:
                _tree_blocks(entries, i + 1 + first_line, len(body), roots, block, blocks, skip)
            if j < n_lines:
                skip.append((j + first_line, "code fence"))
            i = j + 1
            last_blank = False
            continue
        if stripped.startswith("<!--"):
            close()
            j = i
            if "-->" not in stripped[4:]:
                while j + 1 < n_lines and "-->" not in lines[j]:
                    j += 1
                    if "-->" in lines[j]:
                        break
            skip += [(k + first_line, "html comment") for k in range(i, j + 1)]
            i = j + 1
            last_blank = False
            continue
        if not stripped:
            close()
            skip.append((n, "blank"))
            last_blank = True
            i += 1
            continue
        h = _HEADING.match(line)
        if h:
            close()
            level = len(h.group(1))
            while headings and headings[-1][0] >= level:
                headings.pop()
            text = (h.group(2) or "").strip()
            bullets.clear()
            heading_block(text, n, n, level)
            last_blank = False
            i += 1
            continue
        s = _SETEXT.match(line)
        if s and cur is not None and cur.kind == "para" and cur.start == cur.end and not last_blank:
            level = 1 if s.group(1).startswith("=") else 2
            while headings and headings[-1][0] >= level:
                headings.pop()
            text, start = cur.text, cur.start
            cur = None
            bullets.clear()
            heading_block(text, start, n, level)
            i += 1
            continue
        if "|" in stripped and (stripped.startswith("|") or (i + 1 < n_lines and "|" in lines[i + 1]
                                                            and _TABLE_SEP.match(lines[i + 1]))) \
                and not _TABLE_SEP.match(line):
            close()
            if not (blocks and blocks[-1].lead):
                bullets.clear()
            j = _table(lines, i, first_line, block, blocks, skip)
            i = j
            last_blank = False
            continue
        if _HR.match(line) or (stripped.startswith("|") and _TABLE_SEP.match(line)):
            close()
            skip.append((n, "rule"))
            last_blank = False
            i += 1
            continue
        b = _BULLET.match(line)
        if b:
            close()
            indent = len(b.group(1).expandtabs(4))
            while bullets and bullets[-1][0] >= indent:
                bullets.pop()
            text = _CHECKBOX.sub("", b.group(3))
            cur = block("bullet", [text], n, n, indent)
            # "- **hertzbeat-collector**: ..." gives its nested bullets a folder (when the checkout has it)
            lead_name = _LEAD_NAME.match(text)
            bullets.append([indent, None, None, (lead_name.group(1) or lead_name.group(2), False) if lead_name else None,
                            _parent_subject(text)])
            last_blank = False
            i += 1
            continue
        text = re.sub(r"^(?:>\s?)+", "", stripped)
        if cur is not None and not last_blank:
            cur.parts.append(text)
            cur.end = n
        else:
            close()
            if not line[:1].isspace():
                bullets.clear()
            cur = block("para", [text], n, n)
        last_blank = False
        i += 1
    close()
    return blocks


def _tree_blocks(entries: list[_Entry], first: int, count: int, roots: set[str], block, blocks: list[Block],
                 skip: list[tuple[int, str]]) -> None:
    """One block per entry of a fenced tree: the entry's path (relative to the tree's root) is its
    reference, tried under the root folder first."""
    top = min(e.col for e in entries)
    root: _Entry | None = None
    if entries[0].col == top and entries[0].is_dir and sum(e.col == top for e in entries) == 1:
        root = entries[0]
    base = ""
    if root is not None and root.name.strip("/").removeprefix("./").casefold() not in roots:
        base = root.name.strip("/").removeprefix("./")
    lines_seen = {e.offset for e in entries}
    for k in range(count):
        if k not in lines_seen:
            skip.append((first + k, "code block"))
    for e in entries:
        n = first + e.offset
        if e is root and not base:
            skip.append((n, "tree root (the repository)"))
            continue
        if e is root:
            target, shown = e.full, e.full
            ref = RawRef("path", target, 0, literal=False)  # the root: a folder if the checkout has it
            if re.search(r"<[\w-]+>", target):  # specs/<spec-name>/: the layout of any such folder, an example
                ref.literal = ref.placeholder = True
        else:
            target = e.full[len(root.full):] if root is not None else e.full
            shown = (base + "/" if base else "") + target
            ref = RawRef("glob" if "*" in target else "path", target, 0, bases=(base,) if base else (),
                         placeholder=bool(re.search(r"<[\w-]+>", base)))
        text = f"`{shown}`" + (f" — {e.comment}" if e.comment else "")
        blocks.append(block("tree", [text], n, n, refs=[ref] + find_refs(e.comment)))


_SHELL_FENCES = frozenset({"bash", "sh", "shell", "zsh", "console", "shell-session", "shellsession"})
_DIAGRAM_FENCES = frozenset({"mermaid", "plantuml", "puml", "uml", "dot", "graphviz", "d2"})
_CONFIG_FENCES = frozenset({"yaml", "yml", "toml", "ini", "conf", "properties", "env", "dockerfile", "hcl"})
_PROMPT = re.compile(r"^\s*(?:\$|%|>)\s+")
_COMMANDISH = re.compile(r"^(?:sudo\s+)?(?:\.{0,2}/)?[a-z0-9_][\w.+/-]*(?:\s|$)")


def _all_commands(body: list[str]) -> bool:
    """Whether every nonblank line of an unlabelled fence looks like a shell command (a lowercase
    command word or ``./script`` first, optionally after a ``$ `` prompt; no sentence prose)."""
    seen = False
    for raw in body:
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        seen = True
        s = _PROMPT.sub("", s)
        if not _COMMANDISH.match(s) or s.endswith((":", ".")) or re.search(r"[.!?]\s+[A-Z]", s):
            return False
    return seen


def _command_blocks(body: list[str], first: int, info: str, block, blocks: list[Block],
                    skip: list[tuple[int, str]]) -> None:
    """One block per line of a fenced shell block that names a path (``./scripts/bump.sh 0.2.0``,
    ``go build ./cmd/bd``): the command as written in a code span, its path tokens as references.
    Comments, output (in a ``console`` block with prompts, the lines without one) and lines naming
    no path stay skipped as "code block". The nearest heading (below the title) is the command's
    subject unless a lead-in gives one."""
    prompted = info == "console" and any(_PROMPT.match(raw) for raw in body)
    for k, raw in enumerate(body):
        n = first + k
        s = raw.strip()
        if prompted and not _PROMPT.match(raw):
            skip.append((n, "code block"))
            continue
        cmd = _PROMPT.sub("", s).strip()
        if cmd.startswith("#"):  # a comment is prose: "# If conflicts in .beads/issues.jsonl, ..."
            refs = [r for r in find_refs(cmd.lstrip("#")) if not r.exact]
            for r in refs:
                r.start += len(cmd) - len(cmd.lstrip("#"))
        else:
            refs = command_refs(cmd) if cmd else []
        if not refs:
            skip.append((n, "code block"))
            continue
        b = block("command", [_code(cmd)], n, n, refs=refs)
        if not b.labels:
            heads = [h for h, lv in zip(b.headings, b.levels) if lv > 1 and h]
            if heads:
                b.parts = [f"{heads[-1]}: {_code(cmd)}"]
        for r in refs:
            r.start += len(b.parts[0]) - len(cmd) - 1
        blocks.append(b)


def _code(text: str) -> str:
    """``text`` as a Markdown code span (a longer fence when it holds backticks)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _code_blocks(body: list[str], first: int, info: str, block, blocks: list[Block],
                 skip: list[tuple[int, str]]) -> None:
    """One block per line of a fenced block in a programming language (or a text block that is no
    tree) that names something (:func:`memtui.importers.refs.code_line_refs`; a text block's lines are
    read as prose): the line in a code span after the lead-in's or nearest heading's subject, its
    references illustrative (an example when they resolve nowhere). Other lines stay "code block"."""
    prose = info in _TREE_FENCES or info in _DIAGRAM_FENCES
    for k, raw in enumerate(body):
        n = first + k
        line = raw.rstrip("\n").rstrip("\r")
        refs = [] if not line.strip() else find_refs(line) if prose else code_line_refs(line)
        if info in _CONFIG_FENCES and line.strip():  # command: ./update_cache.sh (an unquoted value)
            refs += [r for r in _span_refs(line.strip(), 0) if r.kind in ("path", "glob") and not r.exact and
                     not any(o.target == r.target for o in refs)]
            for r in refs:
                r.illustrative = True
        if prose:
            for r in refs:
                r.illustrative = True
                if r.kind == "symbol" and not r.literal:  # a class in a diagram of classes
                    r.group = f"fence:{first}"
        refs = [r for r in refs if not r.exact]
        if not refs:
            skip.append((n, "code block"))
            continue
        shown = line.strip()
        b = block("code", [_code(shown)], n, n, refs=refs)
        if not b.labels:
            heads = [h for h, lv in zip(b.headings, b.levels) if lv > 1 and h]
            if heads:
                b.parts = [f"{heads[-1]}: {_code(shown)}"]
        blocks.append(b)


def _table(lines: list[str], i: int, first_line: int, block, blocks: list[Block],
           skip: list[tuple[int, str]]) -> int:
    """Blocks for the table starting at ``lines[i]``; returns the index after it. One block per body
    row: "Column: cell; ..." (header names), references read per cell (a single token is literal); a
    column drawn as a tree (``├─jobs/``) gives each cell its full path."""
    header: list[str] = []
    j = i
    if i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1]) and "|" in lines[i + 1]:
        header = _split_row(lines[i])
        skip += [(i + first_line, "table header"), (i + 1 + first_line, "table separator")]
        j = i + 2
    rows: list[tuple[int, list[str]]] = []
    while j < len(lines):
        line = lines[j].rstrip("\n").rstrip("\r")
        if not line.strip() or "|" not in line or _HEADING.match(line) or _FENCE.match(line):
            break
        if _TABLE_SEP.match(line):
            skip.append((j + first_line, "table separator"))
        else:
            rows.append((j + first_line, _split_row(line)))
        j += 1
    ncols = max([len(header)] + [len(c) for _, c in rows]) if rows or header else 0
    tree_cols: dict[int, list[_Entry]] = {}
    for col in range(ncols):
        cells = [c[col] if col < len(c) else "" for _, c in rows]
        if not any(_TREE_CHARS.search(_TREE_PREFIX.match(c).group(0)) for c in cells if c):
            continue
        entries = []
        for k, c in enumerate(cells):
            prefix = _TREE_PREFIX.match(c).group(0)
            m = _TREE_ENTRY.match(c[len(prefix):].strip())
            if m:
                entries.append(_Entry(k, len(prefix), m.group("name").strip("`"), ""))
        _tree_paths(entries)
        tree_cols[col] = entries
    for k, (n, cells) in enumerate(rows):
        refs: list[RawRef] = []
        parts = []
        for col, cell in enumerate(cells):
            entry = next((e for e in tree_cols.get(col, ()) if e.offset == k), None)
            if entry is not None:
                cell_text = f"`{entry.full}`"
                refs.append(RawRef("path", entry.full, col * 100000))
            else:
                cell_text = cell
                for r in find_refs(cell, cells_literal=True):
                    r.start += col * 100000
                    refs.append(r)
            if not cell_text:
                continue
            name = header[col].strip() if col < len(header) else ""
            name = re.sub(r"^(\*\*|__)(.*)\1$", r"\2", name)
            parts.append(f"{name}: {cell_text}" if name else cell_text)
        blocks.append(block("row", ["; ".join(parts)], n, n, refs=refs))
    return j


# -- front matter ----------------------------------------------------------------------------------

def _front_matter(lines: list[str]) -> tuple[dict, int]:
    """(front matter mapping, index of the first body line). Lenient: Cursor writes ``globs: *.ts``,
    which is not YAML; such a block is read as ``key: value`` lines."""
    if not lines or lines[0].strip().lstrip("\ufeff") != "---":
        return {}, 0
    for j in range(1, len(lines)):
        if lines[j].strip() in ("---", "..."):
            raw = "".join(lines[1:j])
            try:
                data = yaml.safe_load(raw)
            except yaml.YAMLError:
                data = None
            if not isinstance(data, dict):
                data = _loose_front_matter(lines[1:j])
            return data, j + 1
    return {}, 0


def _loose_front_matter(lines: list[str]) -> dict:
    out: dict = {}
    key = None
    for raw in lines:
        line = raw.rstrip("\n")
        m = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
        if m:
            key, value = m.group(1), m.group(2).strip()
            out[key] = value.strip("'\"") if value else []
            continue
        item = re.match(r"^\s*-\s+(.*)$", line)
        if item and key is not None and isinstance(out.get(key), list):
            out[key].append(item.group(1).strip().strip("'\""))
    return out


def _globs(value) -> list[str]:
    if value is None or value == "" or value == []:
        return []
    if isinstance(value, str):
        return [g.strip().strip("'\"") for g in value.split(",") if g.strip()]
    if isinstance(value, (list, tuple)):
        return [str(g).strip() for g in value if str(g).strip()]
    return [str(value)]


# -- corrections (auto-memory folder) --------------------------------------------------------------

_CORRECTION = re.compile(
    r"^\W*(?:correction|corrected|update|updated|actually|erratum|fix|fixed|edit|now)\b|"
    r"\b(?:no longer|not anymore|anymore|instead of|instead|was wrong|is wrong|outdated|supersedes?|replaces|"
    r"corrects?|changed to|has changed|switched to|moved to|now (?:uses?|is|are|runs?|lives?))\b", re.I)
_STOP = frozenset("the a an and or of to in on for with by is are was were be been it its this that these those "
                  "we our you your they them use uses used not no now actually correction update updated instead "
                  "anymore longer than from into at as do does don't dont should must always never".split())
_KEY_VALUE = re.compile(r"^([^:`]{2,60}):\s+(.+)$")
_SUBJECT_VERB = re.compile(r"^(.{2,80}?)\s+(is|are|uses|use|runs on|runs|lives in|lives)\s+(.+)$", re.I)
_GENERIC_KEYS = frozenset({"note", "tip", "important", "warning", "todo", "example", "see", "nb", "update",
                           "correction", "actually", "fix", "edit"})


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9_./-]{3,}", text.casefold()) if w not in _STOP}


@dataclass(frozen=True)
class _Claim:
    subject: str
    verb: str  # ":" for "Key: value"
    value: str
    valued: bool  # the value is a code span or holds a number: a setting, not a description


def _claim(text: str) -> _Claim | None:
    """What "Key: value" or "The subject is/uses/runs value" says, or None."""
    t = re.sub(r"[*_]", "", text).strip()
    m = _KEY_VALUE.match(t)
    if m and norm_text(m.group(1).replace("`", "")) not in _GENERIC_KEYS:
        subject, verb, value = m.group(1), ":", m.group(2)
    else:
        if m:  # "Correction: the test command is ..." -> what follows the marker
            t = m.group(2)
        m = _SUBJECT_VERB.match(t)
        if not m:
            return None
        subject, verb, value = m.group(1), m.group(2).casefold(), m.group(3)
    subject = norm_text(re.sub(r"^(?:the|our|we)\s+", "", subject.replace("`", "").strip(), flags=re.I))
    words = subject.split()
    if not words or len(words) > 6 or subject in _GENERIC_KEYS or not value.strip():
        return None
    if verb != ":" and len(words) < 2:
        return None
    valued = "`" in value or bool(re.search(r"\d", value))
    return _Claim(subject, verb, norm_text(value.replace("`", "")), valued)


def find_corrections(texts: list[str]) -> dict[int, tuple[int, str]]:
    """Which earlier texts later ones correct: ``{earlier index: (later index, why)}``.

    Same subject: two "Key: value" lines with the same key, or two "The X is/uses/runs ..." lines with
    the same subject and verb whose values are settings (a code span or a number) or the later of which
    is marked as a correction, and whose values differ. Marked: a later line with a correction marker
    corrects the earlier line sharing the most content words with it (at least two, or half)."""
    out: dict[int, tuple[int, str]] = {}
    claims = [_claim(t) for t in texts]
    words = [_words(t) for t in texts]
    for j, later in enumerate(texts):
        marked = bool(_CORRECTION.search(later))
        cj = claims[j]
        if cj is not None:
            for i in range(j):
                ci = claims[i]
                if i in out or ci is None or (ci.subject, ci.verb) != (cj.subject, cj.verb) or ci.value == cj.value:
                    continue
                if cj.verb == ":" or marked or (ci.valued and cj.valued):
                    out[i] = (j, f"same subject '{cj.subject}', the later value wins")
        if marked and not any(v[0] == j for v in out.values()):
            best, best_score = None, 0.0
            for i in range(j):
                if i in out or not words[i] or not words[j]:
                    continue
                shared = len(words[i] & words[j])
                score = shared / min(len(words[i]), len(words[j]))
                if (shared >= 2 or score >= 0.5) and score >= best_score:
                    best, best_score = i, score
            if best is not None:
                out[best] = (j, "a later line corrects it")
    return out


# -- the repository at HEAD ------------------------------------------------------------------------

class _RepoView:
    """What Markdown evidence needs of the checkout: HEAD's file list, blob texts and symbol
    definitions, read through :class:`~memtui.sources.gitdiff.GitRepo` in a few batched processes."""

    def __init__(self, ctx: ImportContext) -> None:
        from memtui.sources.gitdiff import GitRepo

        self.ctx = ctx
        self.repo = GitRepo(ctx.repo_root) if ctx.repo_root is not None and ctx.head else None
        self._files: set[str] | None = None
        self._texts: dict[str, str | None] = {}

    def files(self) -> set[str]:
        if self._files is None:
            self._files = self.repo.ls_files(self.ctx.head) if self.repo is not None else set()
        return self._files

    def texts(self, rels: list[str]) -> dict[str, str | None]:
        """Texts of files at HEAD (None: not a file there), one ``cat-file --batch`` for the new ones."""
        want = [r for r in dict.fromkeys(rels) if r not in self._texts]
        if want and self.repo is not None:
            blobs = self.repo.read_blobs([(self.ctx.head, r) for r in want])
            for r in want:
                blob = blobs.get((self.ctx.head, r))
                self._texts[r] = None if blob is None or blob.binary else blob.text
        return {r: self._texts.get(r) for r in rels}

    def definitions(self, names: list[str]) -> dict[str, list[tuple[str, int, int, str | None]]]:
        """For each (dotted) name, every definition at HEAD: (path, start, end, span hash)."""
        if self.repo is None or not names:
            return {}
        from memtui.sources.symbol_index import RepoSymbolIndex

        raw = RepoSymbolIndex(self.repo, self.ctx.head).definitions(list(names))
        found = {n: [(d.path, d.start_line, d.end_line) for d in raw.get(n, ())] for n in names}
        texts = self.texts(sorted({p for defs in found.values() for p, _, _ in defs}))
        out: dict[str, list[tuple[str, int, int, str | None]]] = {}
        for n, defs in found.items():
            rows = []
            for path, start, end in dict.fromkeys(defs):
                text = texts.get(path)
                lines = split_lines(text)[start - 1:end] if text else []
                rows.append((path, start, end, span_hash(lines) if lines else None))
            out[n] = rows
        return out


# -- files -----------------------------------------------------------------------------------------

@dataclass
class _Inherit:
    module_path: str | None
    applies_to: list[str]
    importer: str


@dataclass
class _Job:
    path: Path
    inherit: _Inherit | None
    depth: int
    boundary: Path
    memory_folder: bool = False


def _kind(path: Path) -> str:
    name = path.name.casefold()
    parts = [p.casefold() for p in path.parts]
    pairs = list(zip(parts, parts[1:]))
    if name.endswith(".mdc") or (".cursor", "rules") in pairs:
        return "cursor_rule"
    if (".claude", "rules") in pairs:
        return "claude_rule"
    if name in ("claude.md", "claude.local.md"):
        return "claude"
    if name in ("agents.md", "agents.override.md", "agent.md"):
        return "agents"
    if name == ".clinerules" or ".clinerules" in parts[:-1]:
        return "cline"
    if "memory-bank" in parts[:-1]:
        return "memory_bank"
    if name == "copilot-instructions.md" or name.endswith(".instructions.md"):
        return "copilot"
    if name in (".cursorrules", ".windsurfrules", "gemini.md"):
        return "rules"
    return "generic"


def _is_instruction(rel_parts: tuple[str, ...]) -> bool:
    name = rel_parts[-1].casefold()
    parts = [p.casefold() for p in rel_parts]
    pairs = list(zip(parts, parts[1:]))
    if name in ("claude.md", "claude.local.md", "agents.md", "agents.override.md", "agent.md", "gemini.md",
                ".clinerules", ".cursorrules", ".windsurfrules", "copilot-instructions.md", "memory.md"):
        return True
    if name.endswith(".mdc") and (".cursor", "rules") in pairs:
        return True
    if name.endswith(".md") and (".claude", "rules") in pairs:
        return True
    if ".clinerules" in parts[:-1] and name.endswith((".md", ".txt")):
        return True
    if "memory-bank" in parts[:-1] and name.endswith(".md"):
        return True
    return name.endswith(".instructions.md") and ".github" in parts


def _expand_folder(folder: Path) -> list[tuple[Path, bool]]:
    """(file, in a memory folder) for the instruction files under ``folder``, in a stable order."""
    if (folder / "MEMORY.md").is_file():
        topics = sorted(p for p in folder.glob("*.md") if p.name != "MEMORY.md")
        return [(folder / "MEMORY.md", True)] + [(p, True) for p in topics]
    out: list[tuple[Path, bool]] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and (not d.startswith(".") or d in _HIDDEN_OK))
        rel = Path(dirpath).relative_to(folder).parts
        for name in sorted(filenames):
            if _is_instruction((*folder.resolve().parts[-2:], *rel, name)):
                # a MEMORY.md found while walking brings the topic files it links to, not every sibling
                out.append((Path(dirpath) / name, name == "MEMORY.md"))
    seen: set[Path] = set()
    return [(p, m) for p, m in out if not (p in seen or seen.add(p))]


def _module_path(rel: str) -> str | None:
    parts = rel.split("/")[:-1]
    for i, p in enumerate(parts):
        if p.casefold() in _CONFIG_DIRS:
            parts = parts[:i]
            break
    return "/".join(parts) or None


_SUBJECT_SEP = re.compile(r"\s*(?::\s|:$|\s[-–—]\s)")


def _parent_subject(text: str) -> str | None:
    """What a bullet is about, for the bullets nested under it (issue 20: they keep their parent's
    subject): its bold or code lead name, or the short label before ":" / " - "; None otherwise."""
    m = _LEAD_NAME.match(text)
    if m:
        return m.group(1) or m.group(2)
    sep = _SUBJECT_SEP.search(text)
    if sep is None or sep.start() == 0:
        return None
    label = text[:sep.start()].strip()
    return label if len(label.split()) <= 6 and not label.endswith((".", ",", ";")) else None


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", re.sub(r"[*_`]", "", text).casefold()).strip("-")
    return s[:60] or "untitled"


_BOLD = re.compile(r"(?<![\w*/])\*\*(?=[^\s/])(.+?)(?<=[^\s/])\*\*(?![*/])|(?<![\w_])__(?=\S)(.+?)(?<=\S)__(?![\w_]|\.\w)")


_ITALIC = re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])|(?<![\w_\\])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")


def _plain(prose: str) -> str:
    """Markdown emphasis and link syntax out of prose (issue 20): ``**x**`` / ``*x*`` / ``_x_`` -> x,
    ``[text](target)`` -> ``text (target)`` (the target alone when it is the text), an image -> its alt
    text, and a stray ``**`` left by emphasis that spans a label boundary."""
    prose = _BOLD.sub(lambda b: b.group(1) or b.group(2), prose)
    prose = _IMAGE.sub(lambda m: m.group(1), prose)
    prose = _LINK.sub(lambda m: m.group(2) if m.group(1).strip() in ("", m.group(2)) else f"{m.group(1)} ({m.group(2)})",
                      prose)
    prose = _ITALIC.sub(lambda m: m.group(1) or m.group(2), prose)
    return re.sub(r"(?<![/*])\*\*(?![/*])", "", prose)  # a glob's ** stays


def _clean(text: str) -> str:
    """``text`` without emphasis markers or link syntax (:func:`_plain`), whitespace collapsed; code
    spans are left exactly as written. The evidence span keeps the line as written."""
    out, pos = [], 0
    for m in _RCODE.finditer(text):
        out.append(_plain(text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_plain(text[pos:]))
    return re.sub(r"\s+", " ", "".join(out)).strip()


def _states_something(text: str) -> bool:
    if len(text) < 6 or text.endswith(":"):
        return False
    bare = _LINK.sub(" ", _URL.sub(" ", text))
    bare = _IMPORT.sub(" ", bare)
    words = re.findall(r"[A-Za-z0-9_]{2,}", bare)
    return len(words) >= 2 or ("`" in bare and len(words) >= 1)


def _index_links(text: str, folder: Path) -> list[Path]:
    """Local Markdown files a MEMORY.md index line links to (in its folder or below)."""
    out = []
    for m in _LINK.finditer(text):
        target = m.group(2).split("#", 1)[0]
        if target and "://" not in target and target.casefold().endswith(".md"):
            p = (folder / target).resolve()
            if p.is_file() and p.is_relative_to(folder.resolve()):
                out.append(p)
    return out


def _outside_name(path: Path, boundary: Path) -> str:
    """The provenance name of a file outside the repository: relative to the folder given (or holding the
    file given), under that folder's name (``memory/MEMORY.md``), so it does not depend on where it is."""
    try:
        return f"{boundary.name}/{path.relative_to(boundary).as_posix()}"
    except ValueError:
        return path.as_posix()


class _MarkdownImport:
    def __init__(self, ctx: ImportContext) -> None:
        self.ctx = ctx
        self.view = _RepoView(ctx)
        self.out = Parsed()
        self.pending: list[_Pending] = []
        self.done: set[Path] = set()

    # one file
    def read(self, job: _Job) -> list[_Job]:
        path = job.path
        text = read_text(path)
        rel = self.ctx.rel(path)
        source = rel or _outside_name(path, job.boundary)
        self.out.files[str(path)] = "markdown"
        self.out.sources[("markdown", source)] = True
        lines = split_lines(text)
        fm, body = _front_matter(lines)
        kind = "memory_topic" if job.memory_folder and path.name != "MEMORY.md" else (
            "memory_index" if job.memory_folder else _kind(path))
        # evidence anchoring
        mode = "outside"
        if rel is not None and self.ctx.head:
            at_head = self.view.texts([rel])[rel]
            mode = "commit" if at_head == text else "uncommitted"
            if mode == "uncommitted":
                self.out.warnings.append(
                    f"{source}: differs from HEAD (uncommitted or untracked); its candidates' evidence is "
                    "not anchored to a commit until it is committed and imported again")
        elif rel is not None:
            mode = "uncommitted"
        # scope
        if job.inherit is not None:
            module_path, applies_to = job.inherit.module_path, list(job.inherit.applies_to)
        else:
            module_path = _module_path(rel) if rel is not None else None
            applies_to = []
        base_tags = [f"instructions:{kind}"]
        if job.inherit is not None:
            base_tags.append(tag("imported-by", job.inherit.importer))
        if path.name.casefold() == "claude.local.md":
            base_tags.append("local")
        globs = _globs(fm.get("globs")) + _globs(fm.get("paths")) + _globs(fm.get("applyTo"))
        applies_to += [g for g in globs if g not in applies_to]
        if "description" in fm and fm["description"] not in (None, "", []):
            base_tags.append(tag("description", fm["description"]))
        if "alwaysApply" in fm:
            base_tags.append(tag("alwaysApply", str(fm["alwaysApply"]).lower()))
        fm_type = None
        if kind in ("memory_topic", "memory_index"):
            if fm.get("type"):
                base_tags.append(tag("memory-type", fm["type"]))
                fm_type = _MEMORY_TYPES.get(str(fm["type"]).casefold()) or type_for_label(str(fm["type"]))
            if fm.get("name"):
                base_tags.append(tag("topic", fm["name"]))
        if kind == "memory_bank":  # a memory bank's file says what its lines are (activeContext: the task at hand)
            fm_type = fm_type or _BANK_TYPES.get(path.stem.casefold())

        follow: list[_Job] = []
        items: list[Item] = []
        occurrences: dict[str, int] = {}
        file_dir = posixpath.dirname(rel) if rel is not None else ""
        module_dir = (_module_path(rel) or "") if rel is not None else ""
        skipped: list[tuple[int, str]] = [(k + 1, "front matter") for k in range(body)]
        repo_names = [self.ctx.repo_root.name if self.ctx.repo_root is not None else "", self.ctx.repository_id or ""]
        for block in split_blocks(lines[body:], body + 1, skipped, repo_names):
            raw_text = block.text
            span = range(block.start, block.end + 1)
            # @imports and memory index links are followed, not imported as statements
            for target in self._imports(raw_text):
                nxt = self._import_job(job, target, source, module_path, applies_to)
                if nxt is not None:
                    follow.append(nxt)
            if kind == "memory_index" and block.kind in ("bullet", "para"):
                links = _index_links(raw_text, path.parent)
                if links and re.match(r"^\s*\[", raw_text):
                    follow += [_Job(p, None, job.depth, job.boundary, True) for p in links]
                    skipped += [(n, "index link (followed)") for n in span]
                    continue
            refs = block.refs if block.refs is not None else find_refs(raw_text)
            if block.kind == "bullet" and refs and refs[0].exact and refs[0].start <= 1 and block.labels:
                # "- `audit-logger` - ..." under "Key Crates (`crates/`):": one of a list of names
                refs[0].group = f"list:{block.labels}:{block.dirs}:{block.indent}"
            if block.kind == "heading" and all(
                    r.kind == "path" and r.target.rstrip("/").rsplit("/", 1)[-1] == path.name
                    for r in refs if r.literal and not r.exact):
                skipped += [(n, "heading") for n in span]  # "# CLAUDE.md": the file's own title
                continue
            statement = _clean(raw_text)
            if any("/" in t or "." in t for t in self._imports(raw_text)) and \
                    len(re.findall(r"[A-Za-z0-9_]{2,}", _IMPORT.sub(" ", statement))) <= 12:
                skipped += [(n, "@import pointer (followed)") for n in span]
                continue  # "See @docs/x.md for the notes": a pointer, followed above
            if block.lead and not refs:
                skipped += [(n, "lead-in (the subject of the lines below)") for n in span]
                continue
            if not block.lead and block.kind in ("bullet", "para") and not _states_something(statement) and not refs:
                skipped += [(n, "prose with nothing to check") for n in span]
                continue
            if not statement:
                skipped += [(n, "empty") for n in span]
                continue
            if block.labels:  # the lead-in's subject: "Key directories: `src/api/` — HTTP handlers"
                statement = ": ".join(_clean(lab) for lab in block.labels) + ": " + statement
            if block.parent and block.parent.casefold() not in statement.casefold():
                statement = f"{_clean(block.parent)}: {statement}"  # a nested bullet keeps its parent's subject
            key = norm_text(statement)
            occurrences[key] = occurrences.get(key, 0) + 1
            anchor = f"{source}\x1f{key}" + (f"\x1f{occurrences[key]}" if occurrences[key] > 1 else "")
            # a memory topic's own type first; else what the line says, the nearest heading breaking a tie
            # (a level-1 heading is the document's title, not a section)
            mtype = fm_type or type_for_line(statement, [h for h, lv in zip(block.headings, block.levels) if lv > 1],
                                             list(block.labels))
            tags = list(base_tags)
            tags += [tag("section", _slug(h)) for h in block.headings if h]
            tags += [tag("label", _slug(lab)) for lab in block.labels]
            evidence = [self._span_evidence(mode, rel, source, block, lines)]
            it = Item(fmt="markdown", path=str(path), source=source, index=len(items), line=block.start,
                      anchor=anchor, statement=statement, type=mtype, repository_id=self.ctx.repository_id,
                      tenant_id=self.ctx.tenant_id, module_path=module_path, applies_to=list(applies_to),
                      tags=list(dict.fromkeys(tags)), evidence=evidence, proposer_type="markdown",
                      proposer_id=source, state_tags=["uncommitted"] if mode == "uncommitted" else [])
            items.append(it)
            if self.view.repo is not None and refs:
                self.pending.append(_Pending(it, block.dirs, file_dir, module_dir, rel, refs, block.headings,
                                             block.kind == "code"))
        self.out.skipped += [(source, n, why) for n, why in sorted(skipped)]
        if kind in ("memory_index", "memory_topic"):
            for earlier, (later, why) in find_corrections([it.statement for it in items]).items():
                items[earlier].corrected_by = later
                items[earlier].correction_reason = f"line {items[later].line} corrects line {items[earlier].line} ({why})"
        self.out.items += items
        return follow

    def _span_evidence(self, mode: str, rel: str | None, source: str, block: Block, lines: list[str]) -> dict:
        excerpt = "".join(lines[block.start - 1:block.end]).rstrip("\n")
        if mode == "commit":
            return {"type": "file_span", "path": rel, "commit_sha": self.ctx.head, "line_start": block.start,
                    "line_end": block.end, "span_hash": span_hash(lines[block.start - 1:block.end]),
                    "excerpt": excerpt}
        if mode == "uncommitted":
            return {"type": "file_span", "path": rel, "line_start": block.start, "line_end": block.end,
                    "excerpt": excerpt}
        return {"type": "doc", "path": source, "line_start": block.start, "line_end": block.end,
                "ref": f"markdown:{source}", "excerpt": excerpt}

    @staticmethod
    def _imports(text: str) -> list[str]:
        outside = _CODE_SPAN.sub(" ", text)
        out = []
        for m in _IMPORT.finditer(outside):
            target = m.group(1).rstrip(".:!?")
            if target and "@" not in target:
                out.append(target)
        return out

    def _import_job(self, job: _Job, target: str, source: str, module_path: str | None,
                    applies_to: list[str]) -> _Job | None:
        if target.startswith("~"):
            self.out.warnings.append(f"{source}: import @{target} is outside the repository; not read")
            return None
        if "/" not in target and "." not in target:
            return None  # "@dana": a person, not a file
        candidate = (job.path.parent / target)
        try:
            resolved = candidate.resolve()
        except OSError:
            return None
        if not resolved.is_relative_to(job.boundary):
            self.out.warnings.append(f"{source}: import @{target} leaves {job.boundary}; not read")
            return None
        if not resolved.is_file():
            self.out.warnings.append(f"{source}: import @{target} names no file; not read")
            return None
        if resolved.suffix.casefold() not in _FOLLOW_SUFFIXES:
            return None  # a source file: the mention evidence covers it
        if job.depth + 1 > MAX_IMPORT_DEPTH:
            self.out.warnings.append(f"{source}: import @{target} is deeper than {MAX_IMPORT_DEPTH} imports; not read")
            return None
        return _Job(resolved, _Inherit(module_path, list(applies_to), source), job.depth + 1, job.boundary)

    # evidence for the paths and symbols the lines name, resolved in one batch
    def resolve_mentions(self) -> None:
        if not self.pending or self.view.repo is None:
            return
        resolver = RefResolver(self.view.files(), self.ctx.head, self.view.definitions)
        resolver.prefetch(r for p in self.pending for r in p.refs)
        dropped: set[int] = set()
        wheres = [self._where(resolver, p) for p in self.pending]
        held = self._groups_held(resolver, wheres)
        for p, where in zip(self.pending, wheres):
            added: list[dict] = []
            seen: set[tuple] = set()
            for ref in sorted(p.refs, key=lambda r: r.exact):  # as written before a bare word naming the same
                if ref.group in held and not ref.literal:
                    ref = replace(ref, literal=True)
                for ev in resolver.evidence(ref, where):
                    key = (ev["type"], ev["path"], ev.get("symbol"), ev["ref"], ev.get("line_start"))
                    if key not in seen:
                        seen.add(key)
                        added.append(ev)
            if p.guessed and not added:  # a code line whose calls and names are defined nowhere: names nothing
                dropped.add(id(p.item))
                self.out.skipped.append((p.item.source, p.item.line, "code block"))
                continue
            p.item.evidence += added[:MAX_MENTIONS]
        if dropped:
            self.out.items = [it for it in self.out.items if id(it) not in dropped]
            self.out.skipped.sort(key=lambda t: (t[0], t[1]))

    @staticmethod
    def _where(resolver: RefResolver, p: "_Pending") -> Where:
        heading = []
        for d, explicit in p.dirs:  # a heading's folder: as written, or the one folder it names
            hit = resolver.resolve_path(d, [p.file_dir, p.module_dir, ""], folder=True) if d else None
            if hit is not None:
                heading.append(hit[0])
            elif d and explicit:
                heading.append(d)
        heading = tuple(dict.fromkeys(heading))
        soft = resolver.heading_folders(p.headings, dict.fromkeys([p.file_dir, ""]))
        return Where(heading, p.file_dir, p.module_dir, p.own, soft)

    def _groups_held(self, resolver: RefResolver, wheres: list[Where]) -> set[str]:
        """The groups (a list of bare names, the classes of a diagram) whose entries are references
        even where one resolves nowhere: at least two of them resolve, and at least half (so
        ``audit-logger`` among 17 crates that exist is held, and reported as never existing)."""
        seen: dict[str, list[int]] = {}
        for p, where in zip(self.pending, wheres):
            for ref in p.refs:
                if ref.group is not None and not ref.literal:
                    n = seen.setdefault(ref.group, [0, 0])
                    n[0] += 1
                    n[1] += bool(resolver.evidence(ref, where))
        return {g for g, (total, hits) in seen.items() if hits >= 2 and hits * 2 >= total and hits < total}


@dataclass
class _Pending:
    item: Item
    dirs: tuple[tuple[str, bool], ...]
    file_dir: str
    module_dir: str
    own: str | None
    refs: list[RawRef]
    headings: tuple[str, ...] = ()
    guessed: bool = False  # a code line: dropped when none of its references resolved


def _escapes(path: Path, boundary: Path) -> str | None:
    """Why ``path`` (inside ``boundary`` as written) must not be read: it is a symlink, or lies in a
    linked folder, whose target is outside ``boundary``; None when it stays inside (issue 9, item 5)."""
    target = path.resolve()
    if target.is_relative_to(boundary):
        return None
    return f"is a symlink to {target}, outside {boundary}; not read (copy the file in if it belongs here)"


def parse_markdown(files: list[Path], ctx: ImportContext) -> Parsed:
    """Read Markdown instruction files (or folders of them) into candidates; see the module doc.

    A file given or found that is a symlink leading out of the repository (without one: out of the
    folder given, or holding the file given) is never read: it is a refused record naming the file
    (skipped and listed with ``--skip-invalid``); ``@imports`` and index links leaving it are warnings."""
    imp = _MarkdownImport(ctx)
    queue: list[_Job] = []

    def enqueue(f: Path, boundary: Path, memory: bool) -> None:
        why = _escapes(f, boundary)
        if why is None:
            queue.append(_Job(f.resolve(), None, 0, boundary, memory))
        else:
            imp.out.errors.append(record_error(str(f), None, None, None, None, why))

    for p in files:
        p = Path(p)
        here = p.resolve() if p.is_dir() else p.parent.resolve() / p.name  # where it is, not where it points
        in_repo = ctx.repo_root is not None and (here.is_relative_to(ctx.repo_root) or ctx.rel(p) is not None)
        boundary = ctx.repo_root if in_repo else (here if p.is_dir() else here.parent)
        if p.is_dir():
            found = _expand_folder(p)
            if not found:
                imp.out.warnings.append(f"{p}: no instruction files found")
            for f, mem in found:
                enqueue(f, boundary, mem)
        else:
            enqueue(p, boundary, p.name == "MEMORY.md")
    while queue:
        job = queue.pop(0)
        if job.path in imp.done:
            continue
        imp.done.add(job.path)
        try:
            queue += imp.read(job)
        except ImportFileError:
            if job.depth == 0:
                raise
            imp.out.warnings.append(f"{job.path}: imported file cannot be read; skipped")
    imp.resolve_mentions()
    return imp.out

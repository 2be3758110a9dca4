"""Markdown instruction files agents read, as candidates (issue 5, "Import" item 1).

Files: ``CLAUDE.md``, ``CLAUDE.local.md``, ``AGENTS.md`` (nested ones too), ``.claude/rules/*.md``
(front matter ``paths``), ``.cursor/rules/*.mdc`` (front matter ``description``, ``globs``,
``alwaysApply``), ``.clinerules`` (a file or a folder), ``memory-bank/*.md``, GitHub Copilot
instructions (``applyTo``), ``.cursorrules``/``.windsurfrules``/``GEMINI.md``, any other
Markdown file given, and a Claude auto-memory folder (``MEMORY.md`` index plus topic files with
front matter ``name``/``description``/``type``). A folder given is searched for these files.

Each bullet or paragraph that states something becomes a candidate (labels such as
"Testing:", link-only index lines, headings, tables, code blocks and HTML comments do not). Its
evidence is that file span:

* inside the repository and identical to the file at HEAD: ``file_span`` at HEAD with
  ``lines`` and ``span_hash`` (docs/record-format.md), path relative to the repository root;
* inside the repository but uncommitted (changed or untracked): ``file_span`` with path and
  lines but no commit (revalidation cannot check it) and the tag ``uncommitted``; commit and
  import again to anchor it (the candidate's evidence is then refreshed);
* outside the repository (a Claude auto-memory folder lives in ``~/.claude``): ``doc`` evidence
  naming the file and lines, no commit.

Paths and code identifiers the text names (in backticks, ``path/to/file.py``, ``Class.method``,
``function_name()``, a dotted module name) become extra evidence at HEAD with ``ref``
``mention``: a ``file_span`` with the path only for a file that exists at HEAD (relative to the
Markdown file's folder first, then to the root), and a ``symbol`` (path, lines, span hash) for a
Java or Python symbol found in one to three files at HEAD. Revalidation then flags the line when
that file or symbol is deleted (note: it also flags it when the named file or symbol *changes*;
identifiers that resolve to nothing at import time get no evidence; an explicit ``dir/file.ext``
path the checkout does not have is kept, so maintenance flags the line at once).

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
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from memtui.domain.spans import span_hash, split_lines
from memtui.importers.formats import (ImportContext, Item, Parsed, _git_env, norm_text, read_text, tag,
                                      type_for_label, type_for_text)
from memtui.importers.reader import ImportFileError

__all__ = ["parse_markdown", "split_blocks", "Block", "find_corrections", "MAX_IMPORT_DEPTH"]

MAX_IMPORT_DEPTH = 5
MAX_MENTIONS = 8
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", "target",
                        ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".idea", ".vscode"})
_HIDDEN_OK = frozenset({".claude", ".cursor", ".clinerules", ".github"})
_FOLLOW_SUFFIXES = frozenset({".md", ".mdc", ".markdown", ".txt", ""})
_CONFIG_DIRS = (".cursor", ".claude", ".clinerules", "memory-bank", ".github")
_MEMORY_TYPES = {"user": "user_preference", "feedback": "repo_convention", "project": "code_fact",
                 "reference": "code_fact"}
_BANK_TYPES = {"projectbrief": "code_fact", "productcontext": "code_fact", "techcontext": "code_fact",
               "systempatterns": "architecture_decision", "activecontext": "task", "progress": "task"}
_FILE_EXTS = frozenset({"md", "mdc", "py", "pyi", "js", "ts", "tsx", "jsx", "json", "yaml", "yml", "toml", "txt",
                        "java", "go", "rs", "sh", "cfg", "ini", "lock", "html", "css", "xml", "kt", "rb", "c",
                        "h", "cpp", "hpp", "cs", "sql", "gradle", "properties", "env", "log", "csv"})
_SUPPORTED_SYMBOL_GLOBS = ("*.py", "*.pyi", "*.java")


# -- blocks ----------------------------------------------------------------------------------------

@dataclass
class Block:
    """A bullet or paragraph: its text parts, 1-based inclusive lines, the headings above it and
    the labels of the list items (or "Label:" paragraphs) it is nested under."""

    kind: str
    parts: list[str]
    start: int
    end: int
    headings: tuple[str, ...]
    labels: tuple[str, ...]
    indent: int = 0
    levels: tuple[int, ...] = ()  # the level of each of ``headings``

    @property
    def text(self) -> str:
        return re.sub(r"\s+", " ", " ".join(self.parts)).strip()


_BULLET = re.compile(r"^(\s*)([-*+•]|\d{1,3}[.)])\s+(.*)$")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HR = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_CHECKBOX = re.compile(r"^\[[ xX]\]\s+")


def split_blocks(lines: list[str], first_line: int = 1) -> list[Block]:
    """Bullets and paragraphs of Markdown ``lines`` (the first is line ``first_line``), skipping code
    fences, HTML comments, tables, rules and headings (which become the blocks' ``headings``)."""
    blocks: list[Block] = []
    headings: list[tuple[int, str]] = []
    bullets: list[list] = []  # [indent, label or None]
    cur: Block | None = None
    fence: str | None = None
    in_comment = False
    last_blank = True

    def close() -> None:
        nonlocal cur
        if cur is None:
            return
        blocks.append(cur)
        text = cur.text
        if text.endswith(":"):
            label = text[:-1].strip(" *_`")
            if cur.kind == "bullet" and bullets:
                bullets[-1][1] = label
            elif cur.kind == "para":
                bullets.append([-1, label])
        cur = None

    for n, raw in enumerate(lines, start=first_line):
        line = raw.rstrip("\n").rstrip("\r")
        if fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and set(line.strip()) == {fence[0]}:
                fence = None
            continue
        if in_comment:
            if "-->" in line:
                in_comment = False
            last_blank = False
            continue
        m = _FENCE.match(line)
        if m:
            close()
            fence = m.group(1)
            continue
        stripped = line.strip()
        if stripped.startswith("<!--"):
            close()
            if "-->" not in stripped[4:]:
                in_comment = True
            continue
        if not stripped:
            close()
            last_blank = True
            continue
        h = _HEADING.match(line)
        if h:
            close()
            level = len(h.group(1))
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, (h.group(2) or "").strip()))
            bullets.clear()
            last_blank = False
            continue
        s = _SETEXT.match(line)
        if s and cur is not None and cur.kind == "para" and cur.start == cur.end and not last_blank:
            level = 1 if s.group(1).startswith("=") else 2
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, cur.text))
            cur = None
            bullets.clear()
            continue
        if _HR.match(line) or stripped.startswith("|"):
            close()
            last_blank = False
            continue
        b = _BULLET.match(line)
        if b:
            close()
            indent = len(b.group(1).expandtabs(4))
            while bullets and bullets[-1][0] >= indent:
                bullets.pop()
            text = _CHECKBOX.sub("", b.group(3))
            cur = Block("bullet", [text], n, n, tuple(t for _, t in headings),
                        tuple(lab for _, lab in bullets if lab), indent, tuple(lv for lv, _ in headings))
            bullets.append([indent, None])
            last_blank = False
            continue
        text = re.sub(r"^(?:>\s?)+", "", stripped)
        if cur is not None and not last_blank:
            cur.parts.append(text)
            cur.end = n
        else:
            close()
            if not line[:1].isspace():
                bullets.clear()
            cur = Block("para", [text], n, n, tuple(t for _, t in headings),
                        tuple(lab for _, lab in bullets if lab), 0, tuple(lv for lv, _ in headings))
        last_blank = False
    close()
    return blocks


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
    """What Markdown evidence needs of the checkout: HEAD's file list, blob texts and symbols, read
    in a few batched git processes."""

    def __init__(self, ctx: ImportContext) -> None:
        from memtui.sources.gitdiff import GitRepo
        from memtui.sources.symbols import SymbolIndex

        self.ctx = ctx
        self.repo = GitRepo(ctx.repo_root) if ctx.repo_root is not None and ctx.head else None
        self._files: set[str] | None = None
        self._texts: dict[str, str | None] = {}
        self.symbols = SymbolIndex(maxsize=512)

    def _git(self, args: list[str]) -> bytes:
        proc = subprocess.run(["git", "-C", str(self.ctx.repo_root), "-c", "core.quotepath=off", *args],
                              capture_output=True, env=_git_env())
        return proc.stdout if proc.returncode in (0, 1) else b""

    def files(self) -> set[str]:
        if self._files is None:
            if self.repo is None:
                self._files = set()
            else:
                out = self._git(["ls-tree", "-r", "-z", "--name-only", self.ctx.head])
                self._files = {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}
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

    def find_symbols(self, names: set[str]) -> dict[str, list[tuple[str, int, int, str]]]:
        """For each dotted name, the (path, start, end, span hash) of its declaration in 1-3 Java or
        Python files at HEAD; names found nowhere or in more than 3 files are left out."""
        if self.repo is None or not names:
            return {}
        lasts = sorted({n.rsplit(".", 1)[-1] for n in names})
        candidates: set[str] = set()
        for i in range(0, len(lasts), 200):
            args = ["grep", "-z", "-l", "-I", "-w", "-F"]
            for word in lasts[i:i + 200]:
                args += ["-e", word]
            out = self._git([*args, self.ctx.head, "--", *_SUPPORTED_SYMBOL_GLOBS])
            for entry in out.split(b"\0"):
                if entry:
                    path = entry.decode("utf-8", "surrogateescape")
                    candidates.add(path.split(":", 1)[1] if path.startswith(self.ctx.head + ":") else path)
        files = sorted(candidates)[:500]
        texts = self.texts(files)
        words = {path: set(re.findall(r"[\w$]+", text)) for path, text in texts.items() if text}
        found: dict[str, list[tuple[str, int, int, str]]] = {}
        for name in sorted(names):
            last = name.rsplit(".", 1)[-1]
            hits: list[tuple[str, int, int, str, bool]] = []
            for path in files:
                text = texts.get(path)
                if not text or last not in words.get(path, ()):
                    continue
                span = self.symbols.find_symbol(text, path, name)
                if span is not None:
                    lines = split_lines(text)[span.start_line - 1:span.end_line]
                    hits.append((path, span.start_line, span.end_line, span_hash(lines),
                                 span.name == name or span.name.endswith("." + name)))
            exact = [h for h in hits if h[4]] or hits
            if 1 <= len(exact) <= 3:
                found[name] = [h[:4] for h in exact]
        return found


# -- mentions --------------------------------------------------------------------------------------

_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s)>\]]+", re.I)
_LINK = re.compile(r"\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_IDENT = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$")
_DOTTED_CLASS = re.compile(r"(?<![\w./@-])([A-Z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))?(?![\w/-])")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]*_[A-Za-z0-9_]+|[a-z][a-z0-9]*[A-Z]\w*)\(\)")
_IMPORT = re.compile(r"(?:^|(?<=[\s(]))@([^\s)\]`'\",;]+)")


@dataclass
class _Mentions:
    paths: list[str] = field(default_factory=list)
    idents: list[str] = field(default_factory=list)


def _pathish(token: str) -> bool:
    token = token.strip()
    if not token or "://" in token or token.startswith(("@", "~", "$", "-")) or " " in token:
        return False
    if "/" in token:
        return bool(re.search(r"[A-Za-z0-9_]", token))
    return bool(re.fullmatch(r"[\w.-]*[\w-]\.[A-Za-z][A-Za-z0-9]{0,9}", token)) and \
        token.rsplit(".", 1)[-1].casefold() in _FILE_EXTS


def _tokens(text: str) -> list[str]:
    out = []
    for tok in re.split(r"[\s()\[\]<>,;\"'|]+", text):
        tok = tok.strip().rstrip(".:!?").lstrip("(")
        if tok:
            out.append(tok)
    return out


def mentions_of(text: str) -> _Mentions:
    """Paths and code identifiers a line names (unresolved)."""
    found = _Mentions()
    text_no_url = _URL.sub(" ", text)
    for m in _LINK.finditer(text_no_url):
        target = m.group(2).split("#", 1)[0]
        if _pathish(target):
            found.paths.append(target)
    outside = _LINK.sub(lambda m: " " + m.group(1) + " ", text_no_url)
    for m in _CODE_SPAN.finditer(outside):
        code = m.group(1).strip()
        if any(c.isspace() for c in code):
            found.paths += [t for t in _tokens(code) if _pathish(t)]
            continue
        if _pathish(code):
            found.paths.append(code)
            continue
        call = code.endswith("()")
        name = code[:-2] if call else code
        if not _IDENT.match(name):
            continue
        if "." in name:
            found.idents.append(name)
            if name.islower():
                parts = name.split(".")
                found.paths += ["/".join(parts) + ".py", "src/" + "/".join(parts) + ".py",
                                "/".join(parts) + "/__init__.py", "src/" + "/".join(parts) + "/__init__.py"]
        elif call or "_" in name.strip("_") or (name[:1].isupper() and any(c.islower() for c in name)):
            found.idents.append(name)
    plain = _CODE_SPAN.sub(" ", outside)
    plain = _IMPORT.sub(" ", plain)
    for tok in _tokens(plain):
        if _pathish(tok):
            found.paths.append(tok)
    for m in _DOTTED_CLASS.finditer(plain):
        name = m.group(1)
        if name.rsplit(".", 1)[-1].casefold() not in _FILE_EXTS:
            found.idents.append(name)
    for m in _CALL.finditer(plain):
        found.idents.append(m.group(1))
    found.paths = list(dict.fromkeys(found.paths))
    found.idents = list(dict.fromkeys(found.idents))
    return found


def _resolve_path(token: str, file_dir: str, files: set[str]) -> str | None:
    t = token.strip()
    if t.startswith("./"):
        t = t[2:]
    rooted = t.startswith("/")
    t = t.lstrip("/")
    if not t or t.endswith("/"):
        return None
    tries = [t] if rooted or not file_dir else [posixpath.join(file_dir, t), t]
    for cand in tries:
        cand = posixpath.normpath(cand)
        if cand.startswith("..") or cand == ".":
            continue
        if cand in files:
            return cand
    return None


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


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", re.sub(r"[*_`]", "", text).casefold()).strip("-")
    return s[:60] or "untitled"


def _clean(text: str) -> str:
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    return re.sub(r"\s+", " ", text).strip()


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
        self.pending: list[tuple[Item, str, _Mentions]] = []
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
        file_type = fm_type or {
            "cursor_rule": "repo_convention", "claude_rule": "repo_convention", "cline": "repo_convention",
            "copilot": "repo_convention", "rules": "repo_convention",
        }.get(kind) or (_BANK_TYPES.get(path.stem.casefold()) if kind == "memory_bank" else None)

        follow: list[_Job] = []
        items: list[Item] = []
        occurrences: dict[str, int] = {}
        file_dir = posixpath.dirname(rel) if rel is not None else ""
        for block in split_blocks(lines[body:], body + 1):
            raw_text = block.text
            # @imports and memory index links are followed, not imported as statements
            for target in self._imports(raw_text):
                nxt = self._import_job(job, target, source, module_path, applies_to)
                if nxt is not None:
                    follow.append(nxt)
            if kind == "memory_index":
                links = _index_links(raw_text, path.parent)
                if links and re.match(r"^\s*\[", raw_text):
                    follow += [_Job(p, None, job.depth, job.boundary, True) for p in links]
                    continue
            statement = _clean(raw_text)
            if not _states_something(statement):
                continue
            if self._imports(raw_text) and len(re.findall(r"[A-Za-z0-9_]{2,}", _IMPORT.sub(" ", statement))) <= 12:
                continue  # "See @docs/x.md for the notes": a pointer, followed above
            key = norm_text(statement)
            occurrences[key] = occurrences.get(key, 0) + 1
            anchor = f"{source}\x1f{key}" + (f"\x1f{occurrences[key]}" if occurrences[key] > 1 else "")
            mtype = fm_type
            if mtype is None:
                # the nearest heading or label first; a level-1 heading is the document's title, not a section
                sections = [h for h, lv in zip(block.headings, block.levels) if lv > 1] + list(block.labels)
                for heading in reversed(sections):
                    mtype = type_for_label(heading)
                    if mtype:
                        break
            mtype = mtype or file_type or type_for_text(statement)
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
            if self.view.repo is not None:
                self.pending.append((it, file_dir if rel is not None else "", mentions_of(raw_text)))
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
        files = self.view.files()
        idents: set[str] = set()
        for _, _, men in self.pending:
            idents.update(men.idents)
        symbols = self.view.find_symbols(idents)
        head = self.ctx.head
        for it, file_dir, men in self.pending:
            own = it.evidence[0].get("path") if it.evidence else None
            added: list[dict] = []
            seen: set[tuple] = set()
            for token in men.paths:
                p = _resolve_path(token, file_dir, files)
                if p is None and "/" in token.strip("./") and "." in token.rsplit("/", 1)[-1]:
                    # an explicit path the checkout does not have (deleted, renamed, mistyped): keep it as
                    # evidence so maintenance sends the line to review naming the file
                    p = token.strip().removeprefix("./").strip("/")
                if p is None or p == own or ("file_span", p) in seen:
                    continue
                seen.add(("file_span", p))
                added.append({"type": "file_span", "path": p, "commit_sha": head, "ref": "mention"})
            for name in men.idents:
                for path, start, end, h in symbols.get(name, ()):
                    if ("symbol", path, name) in seen:
                        continue
                    seen.add(("symbol", path, name))
                    added.append({"type": "symbol", "path": path, "commit_sha": head, "symbol": name,
                                  "line_start": start, "line_end": end, "span_hash": h, "ref": "mention"})
            it.evidence += added[:MAX_MENTIONS]


def parse_markdown(files: list[Path], ctx: ImportContext) -> Parsed:
    """Read Markdown instruction files (or folders of them) into candidates; see the module doc."""
    imp = _MarkdownImport(ctx)
    queue: list[_Job] = []
    for p in files:
        p = Path(p)
        boundary = ctx.repo_root if ctx.repo_root is not None and ctx.rel(p) is not None else (
            p.resolve() if p.is_dir() else p.resolve().parent)
        if p.is_dir():
            found = _expand_folder(p)
            if not found:
                imp.out.warnings.append(f"{p}: no instruction files found")
            queue += [_Job(f.resolve(), None, 0, boundary, mem) for f, mem in found]
        else:
            memory = p.name == "MEMORY.md"
            queue.append(_Job(p.resolve(), None, 0, boundary, memory))
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

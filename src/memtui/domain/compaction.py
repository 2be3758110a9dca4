"""Compaction proposals (seed 000 §12): related narrow memories read better as one statement. Pure.

Rules (§12.3, issue 4): only fresh, non-conflicting members of one repository; related means
sharing a code identifier named in the statement, an evidence path or an evidence symbol; the
proposal keeps every member's evidence; it is flagged when its scope is broader than a
member's (then a lead must approve); compaction never includes a conflicting or stale member.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime

from memtui.similarity.statements import identifiers

#: Types that are never compacted (decisions keep their own record).
NEVER_COMPACTED = frozenset({"architecture_decision", "evaluation_lesson", "task", "session"})
COMPACTABLE_STATES = frozenset({"active", "approved", "candidate"})
#: A proposal gathers at least three narrow memories: two facts rarely read better as one, and
#: pair proposals would flood the reviewer (seed 000 §12.1 compacts three).
MIN_MEMBERS, MAX_MEMBERS = 3, 6


@dataclass(frozen=True)
class CompactionCandidate:
    """A memory as compaction sees it. ``anchors`` are the evidence paths and symbols it rests on."""

    memory_id: str
    type: str
    state: str
    statement: str
    tenant_id: str
    repository_id: str | None
    module_path: str | None
    anchors: frozenset[str] = frozenset()
    stale: bool = False
    conflicted: bool = False
    in_duplicate_cluster: bool = False
    created_at: datetime | None = None
    order: int = 0  # position among observations recorded at the same time (an MCP entity's list)


@dataclass(frozen=True)
class Proposal:
    """A proposed compaction: members (sorted), the statement, its scope, and why they belong together."""

    proposal_id: str
    members: tuple[str, ...]
    statement: str
    type: str
    tenant_id: str
    repository_id: str | None
    module_path: str | None
    shared: tuple[str, ...]
    broadens_scope: bool
    notes: tuple[str, ...] = field(default_factory=tuple)


def identifiers_of(statement: str) -> frozenset[str]:
    """The code identifiers a statement names (:func:`memtui.similarity.statements.identifiers`: ``RuleRegistry``,
    ``OrderValidator.validate``, ``order_id``, backticked terms), a dotted name also counted by its class part."""
    out = set()
    for m in identifiers(statement):
        m = m.strip(".")
        out.add(m)
        if "." in m and m.split(".")[0][:1].isupper():
            out.add(m.split(".")[0])
    return frozenset(out)


#: A narrow memory states one fact: at most this many words, one clause.
NARROW_MAX_WORDS = 14


def is_narrow(statement: str) -> bool:
    """One short fact: at most NARROW_MAX_WORDS words, no ``;`` joining clauses, no negation (a
    negative fact compacts badly: "X does not use Y" inside a positive summary reads as its opposite)."""
    words = statement.split()
    lowered = f" {statement.lower()} "
    negated = any(w in lowered for w in (" not ", "n't ", " never ", " no "))
    return len(words) <= NARROW_MAX_WORDS and ";" not in statement and not negated


def _eligible(c: CompactionCandidate) -> bool:
    return (c.state in COMPACTABLE_STATES and c.type not in NEVER_COMPACTED and not c.stale
            and not c.conflicted and not c.in_duplicate_cluster and c.repository_id is not None
            and is_narrow(c.statement))


def _common_module(paths: list[str | None]) -> str | None:
    if any(p is None for p in paths):
        return None
    parts = [p.split("/") for p in paths]  # type: ignore[union-attr]
    common = []
    for segs in zip(*parts):
        if len(set(segs)) != 1:
            break
        common.append(segs[0])
    return "/".join(common) or None


#: Rich markup tags: a closing tag, or an opening style tag (``[bold]``, ``[link=URL]``, ``[red on white]``).
_STYLE_WORDS = ("bold|b|italic|i|underline|u|strike|s|dim|d|reverse|r|blink|conceal|overline|o|code|link|"
                "black|red|green|yellow|blue|magenta|cyan|white|bright_\\w+|grey\\d*|gray\\d*|#[0-9a-f]{3,6}|not|on")
_RICH_TAG = re.compile(rf"\[/(?:[^\[\]]*)\]|\[@?(?:{_STYLE_WORDS})(?:[ =][^\[\]]*)?\]", re.I)
_MD_LINK = re.compile(r"\[([^\[\]]+)\]\([^()\s]*\)")  # [text](url) -> text
_MD_REF = re.compile(r"(?<![\w\]])\[([^\[\]\s]+)\](?![\[(])")  # [ADR-012] -> ADR-012 (not rules[0..n])
_MD_EMPHASIS = re.compile(r"(?<![\w*])(\*\*|\*|__)(?=\S)(.+?)(?<=\S)\1(?![\w*])|(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)")
_BACKTICKS = re.compile(r"`+([^`]+)`+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*_\[])")
_SEE = re.compile(r",?\s*\(?\bsee\s+(?P<names>[^;()]+?)\)?$", re.I)


def plain_text(text: str) -> str:
    """``text`` without markup: Rich tags (``[bold]x[/bold]`` -> ``x``), markdown links, emphasis and
    backticks (``**x**``, ``_x_``, `` `rules[0..n]` `` -> ``x``, ``rules[0..n]``); code names stay as written
    (``snake_case``, ``rules[0..n]``); whitespace collapsed."""
    out = _RICH_TAG.sub("", text)
    out = _MD_LINK.sub(r"\1", out)
    out = _BACKTICKS.sub(r"\1", out)
    out = _MD_EMPHASIS.sub(lambda m: m.group(2) if m.group(2) is not None else m.group(3), out)
    out = _MD_REF.sub(r"\1", out)
    return " ".join(out.split())


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip(".;")
    return text


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[\w.\[\]-]+", text.lower()))


def _facts(statement: str, subject: str) -> list[str]:
    """The sentences of one member, markup stripped, without a trailing "see" reference to ``subject`` alone."""
    out = []
    for sentence in _SENTENCE_END.split(plain_text(statement)):
        sentence = _sentence(sentence)
        see = _SEE.search(sentence)
        if see:
            names = [n.strip() for n in re.split(r",\s*|\s+and\s+", see.group("names")) if n.strip()]
            kept = [n for n in names if n.rstrip(".") != subject]
            if len(kept) < len(names):
                tail = f", see {' and '.join(kept)}" if kept else ""
                sentence = sentence[:see.start()] + tail
        if sentence:
            out.append(sentence)
    return out


def _lower_first(fact: str) -> str:
    first = fact.split()[0] if fact.split() else ""
    if first[:1].isupper() and not identifiers_of(first) and not first.isupper():
        return fact[:1].lower() + fact[1:]  # "New rules ..." -> "new rules ..." after the subject's colon
    return fact


def propose_statement(statements: list[str], shared: list[str]) -> str:
    """One statement from the members' own words (extractive): ``"<Subject>: fact; fact; fact."``.

    Markup is stripped (:func:`plain_text`); each distinct fact is kept once (a sentence whose words all
    occur in another kept sentence is dropped); a fact whose grammatical subject is the shared subject
    loses it (``"RuleRegistry holds X"`` -> ``"holds X"``) and comes first; a trailing "see <subject>"
    is dropped. Never longer than the members' texts joined by spaces: else the facts joined without the
    subject, else the stripped members themselves. The reviewer edits it before accepting."""
    subject = shared[0] if shared else ""
    facts: list[str] = []
    for s in statements:
        for fact in _facts(s, subject):
            if fact not in facts:
                facts.append(fact)
    words = [_words(f) for f in facts]
    distinct = [f for i, f in enumerate(facts)
                if not any(j != i and words[i] <= words[j] and (words[i] < words[j] or j < i) for j in range(len(facts)))]
    budget = len(" ".join(" ".join(s.split()) for s in statements))
    if subject:
        about, rest = [], []
        for f in distinct:
            lead = next((f[len(subject) + len(sep):] for sep in (": ", " ") if f.startswith(subject + sep)), "")
            if lead:
                about.append(lead)
            else:
                rest.append(_lower_first(f))
        text = f"{subject}: {'; '.join(about + rest)}."
        if len(text) <= budget:
            return text
    text = "; ".join(distinct) + "."
    if len(text) <= budget:
        return text
    return " ".join(plain_text(s) for s in statements)


def propose(candidates: list[CompactionCandidate]) -> list[Proposal]:
    """Group eligible candidates of one repository by shared anchors (identifiers, evidence paths
    and symbols) into proposals of 2-6 members. Deterministic (sorted ids).

    Grouping: for each code identifier named by the statements of 3-6 eligible (narrow, fresh,
    unconflicted) memories of one (tenant, repository, type), most specific identifier first, those memories form a proposal
    (each memory joins at most one). An identifier named by more memories is too broad to be
    one statement's subject.
    """
    eligible = sorted((c for c in candidates if _eligible(c)), key=lambda c: c.memory_id)
    # a group forms around a code identifier every member's statement names (the subject);
    # evidence anchors only strengthen it (they are listed in ``shared`` when common to all)
    keys: dict[str, frozenset[str]] = {c.memory_id: identifiers_of(c.statement) for c in eligible}
    anchors = {c.memory_id: c.anchors for c in eligible}
    by_id = {c.memory_id: c for c in eligible}
    groups: dict[tuple[str, str | None, str], list[CompactionCandidate]] = {}
    for c in eligible:
        groups.setdefault((c.tenant_id, c.repository_id, c.type), []).append(c)
    proposals: list[Proposal] = []
    for (tenant, repo, _type), members in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "", kv[0][2])):
        # anchor -> members; every anchor shared by 2..MAX members seeds a group around it
        index: dict[str, list[str]] = {}
        for c in members:
            for k in keys[c.memory_id]:
                index.setdefault(k, []).append(c.memory_id)
        seen: set[tuple[str, ...]] = set()
        taken: set[str] = set()
        # most specific first: anchors shared by fewer memories make tighter groups
        for anchor, ids in sorted(index.items(), key=lambda kv: (len(kv[1]), kv[0])):
            ids = sorted(set(ids) - taken)
            if not (MIN_MEMBERS <= len(ids) <= MAX_MEMBERS):
                continue
            # a group needs a second tie: each member shares something with another beyond the anchor
            # only when there are more than two members; two members sharing one anchor are related
            group = tuple(ids)
            if group in seen:
                continue
            seen.add(group)
            types = {by_id[i].type for i in group}
            mtype = types.pop() if len(types) == 1 else "code_fact"
            modules = [by_id[i].module_path for i in group]
            module = modules[0] if len(set(modules)) == 1 else _common_module(modules)
            broadens = any(m != module for m in modules)
            shared = sorted(set.intersection(*(set(keys[i]) | set(anchors[i]) for i in group)),
                            key=lambda s: (not s[:1].isupper(), "/" in s, len(s), s))
            statement = propose_statement([by_id[i].statement for i in group], [anchor] + [s for s in shared if s != anchor])
            pid = "memcomp_" + hashlib.sha256("\x00".join(group).encode()).hexdigest()[:16]
            notes = ("scope broadens: members have different module paths; a lead must approve",) if broadens else ()
            proposals.append(Proposal(pid, group, statement, mtype, tenant, repo, module,
                                      tuple(shared) or (anchor,), broadens, notes))
            taken.update(group)
    return sorted(proposals, key=lambda p: p.proposal_id)


# ---- log-like groups (issue 10, item 5) -------------------------------------------------------

#: At least this many observations of one subject that differ only in numbers, dates, versions or
#: durations are a log, not knowledge: one compaction proposal keeps the latest instead of pairwise
#: duplicates and "different number" conflicts between them.
LOG_MIN_MEMBERS = 8
_VALUE = re.compile(r"(?<![A-Za-z])[-+]?\d[\d.,:/_-]*(?:[a-z%]{1,3}\b)?", re.I)


def log_key(statement: str) -> str:
    """The statement with every number, date, version or duration masked as ``#``, lower case,
    spaces collapsed (``"ExportJob: 242 tests passed."`` -> ``"exportjob: # tests passed"``)."""
    return " ".join(_VALUE.sub("#", statement.lower()).split()).rstrip(".;")


def _newest_last(c: CompactionCandidate) -> tuple:
    return (c.created_at or datetime.min, c.order, c.memory_id)


def log_groups(candidates: list[CompactionCandidate]) -> list[list[CompactionCandidate]]:
    """Groups of >= LOG_MIN_MEMBERS live memories of one (tenant, repository, module, type) whose
    statements share one :func:`log_key` holding a masked value, each oldest first; sorted by the
    first member's id. Conflicted and unreviewed members count: their conflicts are the bloat."""
    groups: dict[tuple, list[CompactionCandidate]] = {}
    for c in candidates:
        if c.state not in COMPACTABLE_STATES or c.stale or c.type in NEVER_COMPACTED:
            continue
        key = log_key(c.statement)
        if "#" in key:
            groups.setdefault((c.tenant_id, c.repository_id, c.module_path, c.type, key), []).append(c)
    out = [sorted(g, key=_newest_last) for g in groups.values() if len(g) >= LOG_MIN_MEMBERS]
    return sorted(out, key=lambda g: min(c.memory_id for c in g))


def propose_log_compactions(candidates: list[CompactionCandidate]) -> list[Proposal]:
    """One proposal per log-like group: every observation compacted into the latest one (the reviewer
    edits the text before accepting when a summary reads better). Deterministic."""
    proposals = []
    for group in log_groups(candidates):
        ids = tuple(sorted(c.memory_id for c in group))
        newest = group[-1]
        values = sorted({v for c in group for v in _VALUE.findall(c.statement)}, key=lambda v: (len(v), v))
        shown = ", ".join(values[:3]) + (f" … {values[-1]}" if len(values) > 4 else
                                         (f", {values[3]}" if len(values) == 4 else ""))
        pid = "memcomp_" + hashlib.sha256(("log\x00" + "\x00".join(ids)).encode()).hexdigest()[:16]
        note = (f"log-like: {len(ids)} observations of \u201c{log_key(newest.statement)}\u201d "
                f"({len(values)} values: {shown}); accepting keeps the latest as one memory")
        proposals.append(Proposal(pid, ids, newest.statement, newest.type, newest.tenant_id, newest.repository_id,
                                  newest.module_path, (log_key(newest.statement),), False, (note,)))
    return proposals

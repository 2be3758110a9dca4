"""What a statement is about (issue 20, item 1): two statements conflict only when they make
incompatible claims about the *same subject*; different subjects described in parallel (items of one
list, rows of one table, sections on different folders, models, commands or environments) never do,
however different their objects.

A statement's subject is read from its shape:

- a *label* before a separator (``"GPT-5 family: gpt-5, ..."``, ``"`server/` — the API"``,
  ``"Run only unit tests: pytest ..."``), label chains (``"Key directories: `server/` — ..."``) compared
  segment by segment after their common prefix;
- otherwise the words before the first verb (``"Validation rules are registered ..."`` ->
  ``validation rules``);
- for an instruction (``"Never use `pytest -x`"``, ``"Run the tests with `pytest -x`"``) the
  identifiers it names.

:func:`relation` compares two statements: ``"same"`` (one subject, stated positively), ``"different"``
(parallel subjects: the labels or leading words differ in a name, identifier or number) or ``"unknown"``.
Pure functions; no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memtui.similarity.statements import identifiers
from memtui.text import without_escapes
from memtui.similarity.text import stem

#: label separators: "X: ...", "X - ...", "X – ...", "X — ...", "X = ...", "X -> ..."
_SEP = re.compile(r"(?<!:):(?=\s|$)|\s[-–—]{1,2}\s|\s=\s|\s(?:->|→)\s")
_CODE = re.compile(r"`[^`\n]+`")
_WORD = re.compile(r"`[^`\n]+`|[A-Za-z0-9][\w'./+#-]*")
_MAX_LABEL_WORDS = 8
_VERBS = frozenset("""is are was were be been has have had does do did can could must should will would may
might shall uses use used runs lives holds contains needs requires calls registers returns stores keeps
reads writes lets handles defines owns builds wraps sends gets goes sets starts points means depends
supports expire expires checks never not always also only usually automatically no""".split())
_PREPOSITIONS = frozenset("from with in on for to via using before after when by into under inside".split())
_IMPERATIVE = frozenset("""always never don't dont do use run avoid prefer keep make ensure add write put
call check place follow only please start install build set configure import create pass test
execute invoke launch deploy commit push open edit update remove delete prefix name""".split())
_STOP = frozenset("""a an the this that these those it its of to in on for with by from as at and or
via into all any each every only just also then when where which who""".split())
_NUMERIC = re.compile(r"\d")


@dataclass(frozen=True)
class Subject:
    """``labels``: the label chain, outermost first (normalised words); ``head``: the leading words
    before the first verb (normalised), or () ; ``ids``: the identifiers named; ``imperative``: the
    statement is an instruction."""

    labels: tuple[tuple[str, ...], ...]
    head: tuple[str, ...]
    ids: frozenset[str]
    imperative: bool


def _norm_words(text: str) -> tuple[str, ...]:
    """Content words of a phrase: stemmed plain words; names kept whole and marked with a leading
    ``=`` (a code span, a word with a digit or symbol, a capitalised word after the first)."""
    out = []
    for k, w in enumerate(_WORD.findall(text)):
        if w.startswith("`"):
            out.append("=" + w.strip("`").strip().casefold())
            continue
        w = w.strip(".,;:!?")
        low = w.casefold()
        if not low or low in _STOP:
            continue
        if _NUMERIC.search(low) or not low.isalpha() or (k > 0 and w[0].isupper()) or w[1:2].isupper():
            out.append("=" + low)
        else:
            out.append(stem(low))
    return tuple(out)


def _strip(text: str) -> str:
    text = without_escapes(text).strip()
    text = re.sub(r"^(?:[-*+•]\s+|\d{1,3}[.)]\s+|\[[ xX]\]\s+)", "", text)
    return text.replace("**", "").replace("__", "").strip()


def _labels(text: str) -> tuple[list[str], str]:
    """The label chain of ``text`` and the rest after the last label."""
    labels: list[str] = []
    rest = text
    for _ in range(3):
        masked = _CODE.sub(lambda m: "x" * len(m.group(0)), rest)  # no separator inside a code span
        m = _SEP.search(masked)
        if m is None or m.start() == 0:
            break
        label = rest[:m.start()].strip()
        if not label or len(_WORD.findall(label)) > _MAX_LABEL_WORDS or label.endswith((".", ",")):
            break
        labels.append(label)
        rest = rest[m.end():].strip()
        if not rest:
            break
    return labels, rest


@lru_cache(maxsize=65536)
def subject(text: str) -> Subject:
    """The :class:`Subject` of one statement."""
    clean = _strip(text)
    labels, rest = _labels(clean)
    words = _WORD.findall(rest if labels else clean)
    first = words[0].casefold().strip("`") if words else ""
    imperative = first in _IMPERATIVE
    head: list[str] = []
    if imperative:  # the verb's object: "Run the MCP server from ..." -> "MCP server"
        verbs = 0
        for w in words[:_MAX_LABEL_WORDS + 2]:
            low = w.casefold()
            if verbs == 0 or (low in _IMPERATIVE and not head):
                verbs += 1
                continue
            if low in _PREPOSITIONS or low.endswith(("n't", ":")):
                break
            head.append(w)
    else:
        for w in words[:_MAX_LABEL_WORDS + 1]:
            low = w.casefold()
            if low in _VERBS or low.endswith("n't"):
                break
            head.append(w)
        else:
            head = []  # no verb near the start: no head
    return Subject(tuple(_norm_words(lab) for lab in labels), _norm_words(" ".join(head)),
                   frozenset(i.casefold() for i in identifiers(clean)), imperative)


def _differ(x: tuple[str, ...], y: tuple[str, ...], labels: bool) -> bool:
    """Two subject phrases name different things. Labels (items of one list or table) differ when
    their words differ beyond one including the other; leading words only when a name, identifier or
    number differs on both sides (``probe 3`` / ``probe 7``), since plain words may be a paraphrase."""
    sx, sy = set(x), set(y)
    if sx == sy:
        return False
    names_x = {w for w in sx - sy if w.startswith("=")}
    names_y = {w for w in sy - sx if w.startswith("=")}
    if sx <= sy or sy <= sx:
        return bool(names_x or names_y) and labels
    if labels:
        return True
    return bool(names_x and names_y)


def relation(a: str, b: str) -> str:
    """``"same"``, ``"different"`` or ``"unknown"``: whether statements ``a`` and ``b`` are about one subject.

    Different when, after the labels both share, both have a further label (or, without labels, a
    head before the verb) and these differ (:func:`_differ`). Same when the remaining labels or heads
    agree, or when neither has one and they share an identifier. Unknown otherwise."""
    sa, sb = subject(a), subject(b)
    la, lb = list(sa.labels), list(sb.labels)
    while la and lb and la[0] == lb[0]:
        la.pop(0)
        lb.pop(0)
    if la and lb:
        return "different" if _differ(la[0], lb[0], True) else "same"
    if la or lb:
        # one side is labelled, the other not ("Docker: ..." vs "The API runs ...")
        lab = (la or lb)[0]
        other = sb if la else sa
        if other.head and _differ(lab, other.head, False):
            return "different"
        return "same" if other.head and set(lab) == set(other.head) else "unknown"
    if sa.ids & sb.ids and (sa.imperative or sb.imperative):
        return "same"  # two instructions naming one tool or command
    if sa.head and sb.head:
        if _differ(sa.head, sb.head, False):
            return "different"
        x, y = set(sa.head), set(sb.head)
        return "same" if x <= y or y <= x else "unknown"  # "read timeout" / "write timeout": unknown
    return "unknown"

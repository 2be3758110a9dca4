"""Text analysis of statements, in one home (issue 20, item 7: moved from the domain, which keeps only
rules about memory): normalising, identifiers, numbers, negation, and the lexical rules behind
near-duplicate and conflict detection (issue 4). Pure: no I/O, no database.

Source rule (issue 4, "Detection"):

* Near-duplicates are proposed strict to lax, as OpenRefine's clustering does: the exact
  :func:`normalize` key, then the :func:`fingerprint` key (case, punctuation, token order), then
  fuzzy candidates verified and scored here. A merge is never proposed between statements that
  differ in a way that matters -- a different identifier, a negation, a number
  (:func:`material_difference`).
* A conflict is two statements about the same subject (shared code identifiers, after removing the
  ones that differ, or the same wording around the difference) with incompatible claims: negation on
  one side only, opposite predicates (enabled/disabled, sync/async, required/optional, ...), the same
  subject and predicate with a different object identifier, or different numbers or versions for the
  same quantity (:func:`conflict_reason`). Facts about different targets ("A works at X" /
  "A administers Y") are not conflicts.

Shapes:

* :func:`analyze` ``(text) -> Analyzed`` precomputes everything a pair judgement needs, so an engine
  that compares one statement against many analyses it once (``Analyzed`` is frozen and hashable).
* :func:`judge_pair` / :func:`judge_analyzed` ``-> PairJudgement(kind, score, reasons)`` with ``kind``
  one of ``duplicate`` / ``conflict`` / ``related`` / ``unrelated``.
* :func:`conflict_reason` / :func:`conflict_reason_analyzed` ``-> (severity, reason) | None`` with
  severity ``high`` (negation or opposite predicate on the same subject) or ``medium`` (a different
  object or number).

The score (0..100) is ``rapidfuzz.fuzz.token_sort_ratio`` (:data:`SCORER`) over :attr:`Analyzed.key`:
the statement's content words -- stop words and negation cues dropped, identifiers kept whole and
lower-cased, other words through the Snowball stemmer (cut to 6 characters) and a small synonym
table, opposite-predicate words reduced to their axis, numbers normalised (:func:`numbers`). Token *sort* rather than token
*set*: a statement that only adds words to another ("OrderValidator calls RuleRegistry" /
"RuleRegistry stores rules") does not score 100. An engine can score keys in bulk
(``rapidfuzz.process.cdist(keys, keys, scorer=SCORER)``) and get the scores :func:`judge_analyzed`
uses. The score alone never decides: :func:`material_difference_analyzed` vetoes a duplicate and
:func:`conflict_reason_analyzed` looks at the aligned content tokens.

Evaluated on ``tests/data/labelled_pairs.yaml`` by ``tests/test_pair_quality.py``. The rules are
lexical (no parser, no embeddings): see that test's module docstring for what they miss.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher

from rapidfuzz import fuzz

from memtui.similarity.text import fingerprint, normalize, stem  # noqa: F401  (fingerprint re-exported)
from memtui.text import without_escapes

#: The similarity function behind every score: token-sort ratio over the content keys (0..100).
SCORER = fuzz.token_sort_ratio
#: At or above this score, a pair with no material difference is a duplicate.
DUPLICATE_THRESHOLD = 74.0
#: At or above this score (or with a shared identifier, or the same first content word), a pair
#: that is neither duplicate nor conflict is related; below, unrelated.
RELATED_THRESHOLD = 50.0
#: How similar two statements must be once their difference is set aside to be "about the same
#: subject" -- for a negation or opposite predicate (high severity) ...
CONFLICT_THRESHOLD = 70.0
#: ... and for a different number (medium severity; numbers need closer wording).
NUMBER_CONFLICT_THRESHOLD = 80.0

# ---------------------------------------------------------------------------------------------
# normalisation keys

# :func:`normalize` and :func:`fingerprint` live in memtui.similarity.text (issue 10, item 8)


# ---------------------------------------------------------------------------------------------
# identifiers

_BACKTICK = re.compile(r"`([^`\n]+)`")
# dotted names and paths: OrderValidator.validate, a/b/c.py, com.acme.x, /health/ready, order.total.max
_DOTTED = re.compile(r"(?<![\w$])(?:[./]?[A-Za-z_$][\w$-]*)(?:[./:][\w$-]+)+(?:\(\))?|(?<![\w$])/[\w$-]+(?:/[\w$-]+)*")
# CamelCase / camelCase / GraphQL / gRPC / OAuth2 / JUnit
_CAMEL = re.compile(r"(?<![\w$])(?:[A-Z]+[a-z0-9]+[A-Z][\w$]*|[a-z]+[A-Z][\w$]*|[A-Z]{2,}(?!s\b)[a-z][a-z0-9]*\b)")
_SNAKE = re.compile(r"(?<![\w$])[A-Za-z0-9]*_[\w]*[A-Za-z0-9][\w]*")
_ACRONYM = re.compile(r"(?<![\w$-])[A-Z][A-Z0-9]+(?:-\d+)?(?=s?\b)")
_VERSION = re.compile(r"v?\d+(?:\.\d+)*")
_PATH_CHAR = re.compile(r"[./:]")
_ABBREV = frozenset({"e.g", "i.e", "etc", "vs", "a.k.a", "n/a", "and/or", "i/o"})


def _clean_identifier(tok: str) -> str:
    tok = tok.strip()
    if tok.endswith("()"):
        tok = tok[:-2]
    return tok.rstrip(".:-/,;")


def identifiers(text: str) -> frozenset[str]:
    """Code identifiers named in prose, case preserved: backticked terms, dotted names and paths
    (``OrderValidator.validate``, ``a/b/c.py``, ``com.acme.x``), CamelCase and camelCase
    (``RuleRegistry``, ``gRPC``), snake_case (``order_id``, ``HALF_EVEN``), ALLCAPS acronyms of 2+
    characters (``JWT``, ``SQS``, ``RS256``, ``ADR-012``; a plural ``JWTs`` gives ``JWT``).
    A trailing ``()`` or sentence punctuation is dropped; a number alone is never an identifier."""
    text = unicodedata.normalize("NFKC", without_escapes(text))
    out: set[str] = set()
    for m in _BACKTICK.finditer(text):
        tok = _clean_identifier(m.group(1))
        if tok:
            out.add(tok)
    plain = _BACKTICK.sub(" ", text)
    for rx in (_DOTTED, _CAMEL, _SNAKE, _ACRONYM):
        hits = []
        for m in rx.finditer(plain):
            tok = _clean_identifier(m.group(0))
            if not tok or tok.casefold() in _ABBREV or not any(c.isalpha() for c in tok):
                continue
            if rx is _DOTTED and (_VERSION.fullmatch(tok) or not _PATH_CHAR.search(tok)):
                continue
            out.add(tok)
            hits.append(m.span())
        if rx is _DOTTED and hits:
            # mask dotted names so their parts are not found again (OrderValidator.validate)
            chars = list(plain)
            for a, b in hits:
                chars[a:b] = " " * (b - a)
            plain = "".join(chars)
    return frozenset(out)


# ---------------------------------------------------------------------------------------------
# numbers

_NUMBER_WORDS = {"two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
                 "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
                 "twenty": "20", "thirty": "30", "hundred": "100", "thousand": "1000"}
_TIME_UNITS = {"ms": 0.001, "msec": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
               "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
               "min": 60, "mins": 60, "minute": 60, "minutes": 60,
               "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
               "d": 86400, "day": 86400, "days": 86400, "week": 604800, "weeks": 604800}
_OTHER_UNITS = {"kb": "KB", "mb": "MB", "gb": "GB", "tb": "TB", "ki": "Ki", "mi": "Mi", "gi": "Gi",
                "kib": "Ki", "mib": "Mi", "gib": "Gi", "%": "%", "percent": "%", "m": "m",
                "x": "x", "times": "x", "k": "k"}
_UNIT_ALT = "|".join(sorted((re.escape(u) for u in [*_TIME_UNITS, *_OTHER_UNITS]), key=len, reverse=True))
_NUM = re.compile(
    r"(?<![\w.$-])(?P<num>v?\d{1,3}(?:,\d{3})+(?:\.\d+)?|v?\d+(?:\.\d+)*)"
    r"(?:(?P<glued>" + _UNIT_ALT + r")\b|\s?(?P<spaced>" + _UNIT_ALT + r")\b)?(?![\w])",
    re.I,
)
_WORD_NUM = re.compile(r"\b(?P<word>" + "|".join(_NUMBER_WORDS) + r"|twice)\b(?:\s(?P<unit>" + _UNIT_ALT + r")\b)?", re.I)


def _format_quantity(num: str, unit: str | None) -> str:
    num = num.lower().lstrip("v").replace(",", "")
    if num.startswith("0.") and num.count(".") == 1:
        num = num.rstrip("0").rstrip(".") or "0"
    unit_l = (unit or "").lower()
    if unit_l in _TIME_UNITS and unit_l != "m" and num.count(".") <= 1:
        seconds = float(num) * _TIME_UNITS[unit_l]
        return f"{seconds:g}s"
    if unit_l:
        return num + _OTHER_UNITS.get(unit_l, unit_l)
    return num


def numbers(text: str) -> tuple[str, ...]:
    """Numbers and versions in order of appearance, with their unit where one follows, normalised:
    durations in seconds (``"2 seconds"``, ``"2s"``, ``"2000 ms"`` -> ``"2s"``; ``"30 minutes"`` ->
    ``"1800s"``), sizes with a canonical unit (``"10 MB"`` -> ``"10MB"``), ``"3 times"`` / ``"three
    times"`` -> ``"3x"``, ``"twice"`` -> ``"2x"``, thousands separators dropped (``"50,000"`` ->
    ``"50000"``), a leading ``v`` dropped from versions (``"v1.2.3"`` -> ``"1.2.3"``), decimals below one
    without trailing zeros (``"0.40"`` -> ``"0.4"``). Digits inside a word (``S3``, ``argon2``,
    ``eu-west-1``) are not numbers."""
    text = unicodedata.normalize("NFKC", text or "")
    found: list[tuple[int, str]] = []
    for m in _NUM.finditer(text):
        found.append((m.start(), _format_quantity(m.group("num"), m.group("glued") or m.group("spaced"))))
    for m in _WORD_NUM.finditer(text):
        word = m.group("word").lower()
        if word == "twice":
            found.append((m.start(), "2x"))
        else:
            found.append((m.start(), _format_quantity(_NUMBER_WORDS[word], m.group("unit"))))
    return tuple(q for _, q in sorted(found))


_NUMERAL = re.compile(r"(?<![\w.$-])\d+(?:\.\d+)*")
_NUMERAL_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9+#-]*")
_NUMERAL_WORDS = {**_NUMBER_WORDS, "one": "1", "twice": "2", "once": "1"}


def numerals(text: str) -> frozenset[str]:
    """The numbers of ``text`` as written, without their units: digits (leading zeros and a trailing
    ``.0`` dropped: ``"02:00"`` -> ``{"2", "0"}``, ``"1.75.0"`` -> ``"1.75"``) and number words
    (``"five"`` -> ``"5"``). Complements :func:`numbers` (units normalised): ``"15 minutes"`` and
    ``"a 15-min TTL"`` agree here, ``"15 minutes"`` and ``"900 seconds"`` there."""
    out = set()
    for m in _NUMERAL.finditer(text):
        n = m.group(0)
        while n.endswith(".0") and n.count(".") > 1:
            n = n[:-2]
        head, _, tail = n.partition(".")
        out.add((head.lstrip("0") or "0") + ("." + tail if tail else ""))
    for w in _NUMERAL_TOKEN.findall(text):
        v = _NUMERAL_WORDS.get(w.lower())
        if v:
            out.add(v)
    return frozenset(out)


# ---------------------------------------------------------------------------------------------
# negation

_NEG_EXCLUDE = re.compile(
    r"\b(?:not only|not just|not necessarily only|whether or not|if not exists|no matter|no-op|"
    r"not to mention|nothing but)\b", re.I)
_NEG_CUE = re.compile(
    r"\b(?:not|never|no|without|cannot|nor|neither|none|nothing|nobody|nowhere|avoid|avoids|"
    r"avoided|avoiding|instead of|rather than)\b|n't\b", re.I)


def negation_count(text: str) -> int:
    """How many negation cues the statement carries: ``not``, ``never``, ``no`` (``no longer`` too),
    ``n't``, ``without``, ``cannot``, ``nor``, ``neither``, ``none``, ``avoid``, and the contrastive
    ``instead of`` / ``rather than`` (so "X, not Y" and "X rather than Y" agree). ``not only``,
    ``not just``, ``whether or not``, ``if not exists``, ``no matter``, ``no-op`` are not negations."""
    t = unicodedata.normalize("NFKC", text or "").replace("\u2019", "'")
    t = _NEG_EXCLUDE.sub(" ", t)
    return len(_NEG_CUE.findall(t))


_POLARITY_CLAUSE = re.compile(r"(;|:\s|\.\s+|,\s*(?:but|while|whereas|and not|not)\b|\s+but\s+)", re.I)
_REQUIREMENT = re.compile(r"\b(?:until|unless|except|otherwise)\b", re.I)
_NOR = re.compile(r"\bnor\b", re.I)


def polarity_clauses(text: str) -> list[str]:
    """``text`` cut at clause boundaries, each separator kept at the head of the clause it opens
    (``"X, not Y"`` -> ``["X", ", not Y"]``, so the ``not`` stays with what it negates)."""
    parts = _POLARITY_CLAUSE.split(text or "")
    out = [parts[0]] + [sep + rest for sep, rest in zip(parts[1::2], parts[2::2])]
    return [c for c in out if c and c.strip()] or [text or ""]


def clause_negations(clause: str) -> int:
    """The negation cues of one clause that flip its claim: 0 when they cancel (an even count: "never
    deploy without a review") or state a requirement ("cannot ship until the QA lead approves", "no
    merge unless CI is green" -- a condition, the same claim as "needs ... before")."""
    n = negation_count(clause)
    nors = len(_NOR.findall(clause))
    if nors and n > nors:  # "neither ... nor", "not ... nor": one negation
        n -= nors
    if n % 2 == 0 or (n == 1 and _REQUIREMENT.search(clause)):
        return 0
    return n


def polar_negations(text: str) -> int:
    """:func:`clause_negations` summed over :func:`polarity_clauses`: the negations that make a claim
    the opposite of the same words without them. ``"Releases do not ship on Fridays"`` -> 1;
    ``"A release cannot ship until QA approves"`` -> 0."""
    return sum(clause_negations(c) for c in polarity_clauses(text))


def negated(text: str) -> bool:
    """True when the claim carries a negation that flips it (see :func:`polar_negations`).
    ``"OrderValidator does not cache results"`` -> True; ``"not only X but Y"`` -> False;
    ``"X no longer uses Y"`` -> True."""
    return polar_negations(text) > 0


# ---------------------------------------------------------------------------------------------
# content tokens: stop words, stemming, synonyms, opposite predicates

_STOPWORDS = frozenset("""
a an the this that these those it its it's they them their there here we our us you your i my
is are was were be been being am do does did done doing has have had having will would shall
should can could may might must need needs needed ought
of in on at to for from by with via through into onto over under about as per than then so
and or but if when while whose which who whom what where whether because since until unless
also only just all any each every some such same other another more very too
e.g i.e etc eg ie vs one way longer instead rather
up out off again once own both either
""".split())

# synonym groups: every word of a group stems to the group's first word (after :func:`_raw_stem`)
_SYNONYM_GROUPS = (
    # where something is registered, kept or configured: "registered through", "added via",
    # "configured in", "stored in", "lives in", "defined in" all place a thing somewhere
    "register registry registration add configure configuration config declare define store keep kept "
    "live reside locate sit hold put",
    "use utilize employ",
    "need require",
    "start begin",
    "call invoke",
    "check verify hit validate validation",
    "run execute",
    "expire ttl expiry expiration",
    "compute calculate",
    "publish emit",
    "load read fetch retrieve",
    "delete remove",
    "repository repo",
    "database db",
    "production prod",
    "development dev",
    "minute min",
    "second sec",
    "id identifier",
    "test spec",
)
# opposite predicates: word -> (axis, pole)
_POLAR: dict[str, tuple[str, int]] = {}


def _polar(axis: str, plus: str, minus: str) -> None:
    for w in plus.split():
        _POLAR[w] = (axis, 1)
    for w in minus.split():
        _POLAR[w] = (axis, -1)


_polar("enable", "enabled enable enables enabling", "disabled disable disables disabling")
_polar("sync", "sync synchronous synchronously", "async asynchronous asynchronously")
_polar("require", "required mandatory compulsory", "optional")
_polar("allow", "allowed allow allows permitted permit permits", "forbidden forbid forbids prohibited "
       "prohibit prohibits disallowed disallow disallows banned")
_polar("mutable", "mutable", "immutable")
_polar("blocking", "blocking", "nonblocking")
_polar("order", "before", "after")
_polar("always", "always", "never")
_polar("include", "include includes included including", "exclude excludes excluded excluding")
_polar("visibility", "public", "private")
_polar("eager", "eager eagerly", "lazy lazily")
_polar("sort", "ascending asc", "descending desc")
_polar("auth", "authenticated", "unauthenticated anonymous")
_polar("auto", "automatic automatically", "manual manually")
_polar("inside", "inside", "outside")
_polar("side", "clientside", "serverside")
_polar("root", "root", "nonroot")
_polar("sensitive", "sensitive", "insensitive")
_polar("accept", "accept accepts accepted", "reject rejects rejected")
_polar("respect", "respect respects respected honor honors obey obeys", "ignore ignores ignored")
_polar("encrypt", "encrypted", "unencrypted plaintext")
_polar("state", "stateful", "stateless")
_polar("static", "static", "dynamic")
_polar("case", "uppercase uppercased", "lowercase lowercased")
_polar("bound", "maximum max", "minimum min")
_polar("atleast", "least", "most")
_polar("first", "first", "last")
_polar("age", "oldest earliest", "newest latest")
_polar("power", "on", "off")  # only as "turned on" / "switched off", see _ON_OFF
_polar("succeed", "succeeds succeed", "fails fail")
_polar("supported", "supported", "unsupported deprecated")
_polar("valid", "valid", "invalid")
_polar("idempotent", "idempotent", "nonidempotent")

#: The antonym table, read-only: word -> (axis, pole), e.g. ``"ascending"`` -> ``("sort", 1)``. The
#: pair scorer's antonym feature reads it (:mod:`memtui.similarity.features`).
POLAR_WORDS: dict[str, tuple[str, int]] = _POLAR

_NEGATIVE_PREFIXES = ("non", "un", "in", "im", "dis")
_ON_OFF = re.compile(r"\b(turn(?:s|ed)?|switch(?:es|ed)?|toggle[sd]?|set|is|are)\s+(on|off)\b(?!\s+and\s+o)", re.I)
_AUXILIARIES = frozenset("is are was were be been has have had does do did can could must should will "
                         "would may might shall".split())
_DETERMINERS = frozenset({"the", "a", "an", "with", "to", "in", "on", "through", "by", "from", "via",
                          "into", "as", "of", "per", "for", "using", "at", "its", "their"})
_NEG_WORDS = frozenset({"not", "never", "no", "without", "cannot", "nor", "neither", "none", "nothing",
                        "nobody", "nowhere", "avoid", "avoids", "avoided", "avoiding", "instead", "rather",
                        "longer"})
_CONTRACTION = re.compile(r"^(\w+)n't$")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_CAMEL_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_CHUNK = re.compile(r"`[^`\n]+`|\S+")
_EDGE_PUNCT = "\"'([{<*_,;:!?)]}>."


def _raw_stem(word: str) -> str:
    """The shared Snowball stemmer (:func:`memtui.similarity.text.stem`) truncated to 6 characters
    (validate / validation / validated -> ``valid``)."""
    return stem(word)[:6]


_STEM_SYNONYMS: dict[str, str] = {}
#: groups whose words share a token with an opposite-predicate axis ("requires" / "is required")
_GROUP_TOKEN = {"need": "~require"}
for _group in _SYNONYM_GROUPS:
    _words = _group.split()
    for _w in _words:
        _STEM_SYNONYMS.setdefault(_raw_stem(_w), _GROUP_TOKEN.get(_words[0], _raw_stem(_words[0])))
#: irregular or ambiguous words mapped exactly (not by stem): "responds" but not "response"
_WORD_SYNONYMS = {"kept": "regist", "made": "mak", "written": "writ", "wrote": "writ", "ran": "run",
                  "built": "build", "respond": "return", "responds": "return", "responded": "return",
                  "ids": "id", "min": "minut", "mins": "minut", "sec": "second", "secs": "second"}
#: names that are the same thing
_NAME_ALIASES = {"postgresql": "postgres", "pg": "postgres", "psql": "postgres", "k8s": "kubernetes",
                 "jdk": "java", "golang": "go", "js": "javascript", "ts": "typescript",
                 "node.js": "node", "nodejs": "node", "mongo": "mongodb", "gh": "github"}


_STEM_CACHE: dict[str, str] = {}


def _stem(word: str) -> str:
    """:func:`_raw_stem`, then the synonym groups (``configured`` -> ``regist``, ``repo`` ->
    ``reposi``). Memoised (a bounded cache)."""
    s = _STEM_CACHE.get(word)
    if s is not None:
        return s
    s = _WORD_SYNONYMS.get(word)
    if s is None:
        s = _raw_stem(word)
        s = _STEM_SYNONYMS.get(s, s)
    if len(_STEM_CACHE) < 200_000:
        _STEM_CACHE[word] = s
    return s


#: predicates that take many objects: "A calls X" and "A calls Y" are both true
_MULTI_VALUED = frozenset(_stem(w) for w in (
    "call invoke import depend review maintain own administer publish emit subscribe read support "
    "expose log mention link wrap handle consume use include cover send").split())


def _identifier_words(ident: str) -> tuple[str, ...]:
    """``RuleRegistry.withDefaultRules`` -> ``("rule", "register", "with", "default", "rule")`` (stemmed)."""
    out = []
    for part in _NON_ALNUM.split(ident):
        for w in _CAMEL_SPLIT.findall(part):
            w = w.lower()
            if w and w not in _STOPWORDS:
                out.append(_stem(w))
    return tuple(out)


@dataclass(frozen=True)
class Analyzed:
    """One statement analysed once, for cheap pair judgements.

    ``normalized`` / ``fingerprint``: the exact and fingerprint keys; ``identifiers``: as
    :func:`identifiers`; ``numbers``: as :func:`numbers`; ``negated`` / ``negations``: as
    :func:`negated` / :func:`negation_count`; ``tokens``: the :func:`normalize` tokens;
    ``key``: the content words the score is computed on (see the module docstring);
    ``content``: the aligned content sequence (identifiers whole and lower-cased, numbers as
    ``#``, opposite-predicate words as ``~axis``); ``prev``: for each ``content`` token the raw word
    before it; ``names``: lower-cased identifiers plus capitalised words inside a sentence and words
    with digits (``Redis``, ``argon2``) and kebab-case names (``order-service``) -- things a
    statement can be "about"; ``polar``: the (axis, pole) pairs of opposite-predicate words in the
    predicate; ``qualifiers``: the same for an adjective opening the statement ("Public endpoints
    ..."), which qualifies the subject instead; ``words``: the set of content words and
    identifier words, for matching an identifier written out in prose; ``surface``: (content token,
    as written) pairs for the reasons; ``flags``: per ``content`` token, whether it is an identifier or
    name; ``neg_heads``: the content tokens right after a negation cue (what is negated);
    ``neg_clause``: for a statement of several clauses, the analysis of just its negated clauses
    ("Rules are registered through RuleRegistry; OrderValidator must not hold rules" -> the second
    clause), so a negation is compared with what it is about."""

    text: str
    normalized: str
    fingerprint: str
    identifiers: frozenset[str]
    numbers: tuple[str, ...]
    negated: bool
    tokens: tuple[str, ...]
    negations: int
    key: str
    content: tuple[str, ...]
    prev: tuple[str, ...]
    names: frozenset[str]
    polar: frozenset[tuple[str, int]]
    words: frozenset[str]
    surface: tuple[tuple[str, str], ...] = ()
    flags: tuple[bool, ...] = ()
    neg_heads: frozenset[str] = frozenset()
    neg_clause: "Analyzed | None" = None
    qualifiers: frozenset[tuple[str, int]] = frozenset()


def _id_key(tok: str) -> str:
    return _clean_identifier(tok).casefold()


_HAS_DIGIT = re.compile(r"\d")
_NUMBER_CHUNK = re.compile(r"v?\d[\d.,]*[a-zA-Z%]{0,3}", re.I)
_WORD_SPLIT = re.compile(r"[^\w']+")
_KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
#: first / last parts of ordinary hyphenated English words (not names): multi-stage, read-only
_COMPOUND_FIRST = frozenset("""non multi pre post re self end in auto soft hard built case read write
cross sub co de anti semi well long short high low full half one two three single double server client
cursor time run out up down off on opt by all over under per top bottom first last third open close
""".split())
_COMPOUND_LAST = frozenset("""based side only level wide free safe aware like specific signed driven
in out up down on off time end first last style friendly ready proof related bound facing""".split())
_NEG_CONTRACTED = frozenset({"ca", "won", "don", "doesn", "isn", "aren", "wasn", "weren", "hasn", "haven",
                             "shouldn", "mustn", "can", "couldn", "wouldn", "didn", "needn", "hadn"})


def _is_kebab_name(low: str) -> bool:
    """``order-service``, ``eks-prod``, ``eu-west-1``, ``lucide-react`` -- but not ``multi-stage``,
    ``non-blocking``, ``read-only``, ``end-to-end``."""
    if not _KEBAB.fullmatch(low):
        return False
    parts = low.split("-")
    if any(p.isdigit() for p in parts[1:]) or any(c.isdigit() for c in low):
        return True
    if any(p in ("to", "and", "or", "the", "of") for p in parts):
        return False
    return parts[0] not in _COMPOUND_FIRST and parts[-1] not in _COMPOUND_LAST


class _Tokens:
    """Accumulates the content sequence of one statement (see :func:`analyze`)."""

    __slots__ = ("content", "prev", "flags", "key", "names", "surface", "words", "heads", "last",
                 "pending_neg")

    def __init__(self) -> None:
        self.content: list[str] = []
        self.prev: list[str] = []
        self.flags: list[bool] = []
        self.key: list[str] = []
        self.names: set[str] = set()
        self.surface: dict[str, str] = {}
        self.words: set[str] = set()
        self.heads: set[str] = set()
        self.last = ""
        self.pending_neg = False

    def emit(self, tok: str, raw: str, *, name: bool = False, key: tuple[str, ...] = ()) -> None:
        self.content.append(tok)
        self.prev.append(self.last)
        self.flags.append(name)
        self.key.extend(key)
        self.surface.setdefault(tok, raw)
        if self.pending_neg:
            self.heads.add(tok)
            self.pending_neg = False
        self.last = raw

    def skip(self, raw: str) -> None:
        self.last = raw


_CLAUSE_SPLIT = re.compile(
    r"\s*;\s*|(?<=[.!?])\s+(?=[A-Z`])|,?\s+(?:but|whereas|while|so that|so)\s+|,\s+(?:and|which)\s+")


def analyze(text: str, _clauses: bool = True) -> Analyzed:
    """Analyse one statement (pure; a few regular-expression passes over the text)."""
    text = text or ""
    t = unicodedata.normalize("NFKC", without_escapes(text)).replace("\u2019", "'")
    ids = identifiers(t)
    id_keys = {_id_key(i): i for i in ids}
    nums = numbers(t)
    negs = polar_negations(t)
    on_off = _ON_OFF.search(t)

    tk = _Tokens()
    for k, ident in id_keys.items():
        tk.names.add(_NAME_ALIASES.get(k, k))
        tk.surface[_NAME_ALIASES.get(k, k)] = ident
    polar: set[tuple[str, int]] = set()
    qualifiers: set[tuple[str, int]] = set()
    sentence_start = True
    pending_non = False
    after_number = False
    # a backticked command (`mvn -q verify`) reads as its words
    prose = _BACKTICK.sub(lambda m: m.group(1) if any(c.isspace() for c in m.group(1).strip()) else m.group(0), t)
    for m in _CHUNK.finditer(prose):
        chunk = m.group(0)
        ends_sentence = chunk.rstrip("\"')]}*").endswith((".", ";", ":", "!", "?")) and not chunk.endswith("e.g.")
        if chunk.startswith("`") and chunk.endswith("`"):
            raw = chunk[1:-1].strip()
        else:
            raw = chunk.strip(_EDGE_PUNCT)
            if raw.endswith("()"):
                raw = raw[:-2]
            raw = raw.strip(_EDGE_PUNCT)
        if not raw:
            sentence_start = sentence_start or ends_sentence
            continue
        low = raw.casefold()
        if low not in id_keys and low.endswith("s") and low[:-1] in id_keys:
            low = low[:-1]  # JWTs -> jwt
        if low in id_keys:
            iw = _identifier_words(id_keys[low])
            alias = _NAME_ALIASES.get(low, low)
            tk.emit(alias, low, name=True, key=(alias,))
            tk.words.update(iw)
            tk.words.add(low)
            after_number = pending_non = False
            sentence_start = ends_sentence
            continue
        if (raw[0].isdigit() or (raw[0] in "vV" and raw[1:2].isdigit())) and _NUMBER_CHUNK.fullmatch(raw):
            tk.emit("#", low)
            after_number, pending_non = True, False
            sentence_start = ends_sentence
            continue
        if "-" in low and _is_kebab_name(low) and not any(p in id_keys for p in low.split("-")):
            parts = tuple(_stem(p) for p in low.split("-"))
            tk.surface.setdefault(low, raw)
            tk.emit(low, low, name=True, key=parts)
            tk.names.add(low)
            tk.words.update(parts)
            tk.words.add(low)
            after_number = pending_non = False
            sentence_start = ends_sentence
            continue
        # prose: split into words (hyphens, slashes, dots inside a non-identifier)
        for i, part in enumerate(p for p in _WORD_SPLIT.split(raw) if p):
            w = part.casefold().strip("'")
            if w.endswith("'s"):
                w = w[:-2]  # possessive: the user's locale
            if not w:
                continue
            cap = part[:1].isupper() and not part.isupper() and not (sentence_start and i == 0)
            cm = _CONTRACTION.match(w)
            if cm:
                w = cm.group(1)
                if w in _NEG_CONTRACTED:
                    tk.pending_neg = True
                    tk.skip(w)
                    continue
            if w in _NEG_WORDS:
                tk.pending_neg = True
                tk.skip(w)
                continue
            if w in _NUMBER_WORDS or w == "twice":
                tk.emit("#", w)
                after_number = True
                continue
            if after_number and (w in _TIME_UNITS or w in _OTHER_UNITS):
                after_number = False
                tk.skip(w)
                continue
            after_number = False
            if w == "non":
                pending_non = True
                continue
            if pending_non:
                w = "non" + w
                pending_non = False
            if w in ("on", "off"):
                if on_off and on_off.group(2).lower() == w:
                    polar.add(_POLAR[w])
                    tk.emit("~power", w, key=("~power",))
                else:
                    tk.skip(w)
                continue
            if w in _POLAR:
                axis, pole = _POLAR[w]
                if tk.content or w == "always" or w.endswith("ly"):
                    polar.add((axis, pole))
                else:
                    # an adjective opening the statement qualifies the subject: "Public endpoints
                    # ..." / "Private endpoints ..." are two subjects, not a contradiction
                    qualifiers.add((axis, pole))
                tk.emit("~" + axis, w, key=("~" + axis,))
                continue
            if w in _STOPWORDS or (w.endswith("ly") and len(w) > 4):
                tk.skip(w)
                continue
            if w.isdigit():
                tk.emit("#", w)
                after_number = True
                continue
            if cap or (not w.isalpha() and _HAS_DIGIT.search(w)):
                # a name (Redis, argon2): kept as written, lower-cased, not stemmed
                alias = _NAME_ALIASES.get(w, w)
                tk.surface.setdefault(alias, part)
                tk.emit(alias, w, name=True, key=(alias,))
                tk.names.add(alias)
                tk.words.add(w)
                tk.words.add(_stem(w))
                continue
            st = _stem(w)
            tk.emit(st, w, key=(st,))
            tk.words.add(st)
            tk.words.add(w)
        sentence_start = ends_sentence
    normalized = normalize(t)
    neg_clause = None
    if negs and _clauses:
        clauses = [c for c in _CLAUSE_SPLIT.split(t) if c and c.strip()]
        negated_clauses = [c for c in clauses if polar_negations(c)]
        if len(clauses) > 1 and len(negated_clauses) < len(clauses):
            neg_clause = analyze(" ".join(negated_clauses), _clauses=False)
    return Analyzed(
        text=text,
        normalized=normalized,
        fingerprint=" ".join(sorted(set(normalized.split()))),
        identifiers=ids,
        numbers=nums,
        negated=negs > 0,
        tokens=tuple(normalized.split()),
        negations=negs,
        key=" ".join([*tk.key, *nums]),
        content=tuple(tk.content),
        prev=tuple(tk.prev),
        names=frozenset(tk.names),
        polar=frozenset(polar),
        qualifiers=frozenset(qualifiers),
        words=frozenset(tk.words),
        surface=tuple(sorted(tk.surface.items())),
        flags=tuple(tk.flags),
        neg_heads=frozenset(tk.heads),
        neg_clause=neg_clause,
    )


# ---------------------------------------------------------------------------------------------
# pair logic


@dataclass(frozen=True)
class PairJudgement:
    """``kind``: duplicate / conflict / related / unrelated; ``score``: :data:`SCORER` over the keys
    (0..100); ``reasons``: the material difference or conflict reason in words (may be empty)."""

    kind: str
    score: float
    reasons: tuple[str, ...]


def _matched(name: str, x: Analyzed, y: Analyzed) -> bool:
    """Is ``name`` (a lower-cased identifier or name of ``x``) also named by ``y``? The same key, in
    ``y``'s identifiers, names or words (so a name at the start of a sentence still matches); an
    alias (``Postgres`` / ``PostgreSQL``); a dotted parent/child or a path suffix (``OrderValidator`` /
    ``OrderValidator.validate``, ``conftest.py`` / ``tests/conftest.py``). Words of an identifier
    written out in prose ("the registry for rules") do not match it: ``y`` then simply omits the
    identifier, which is not a difference."""
    if name in y.names or name in y.words or (len(name) <= 6 and _stem(name) in y.words):
        return True
    if " " in name and f" {normalize(name)} " in f" {y.normalized} ":
        return True
    alias = _NAME_ALIASES.get(name, name)
    for other in y.names:
        if _NAME_ALIASES.get(other, other) == alias:
            return True
        if other.startswith(name + ".") or name.startswith(other + ".") or other.endswith("/" + name) \
                or name.endswith("/" + other):
            return True
    return False


def _unmatched(x: Analyzed, y: Analyzed) -> list[str]:
    return sorted(n for n in x.names if not _matched(n, x, y))


def _display(x: Analyzed, names) -> str:
    by_key = dict(x.surface)
    return ", ".join(by_key.get(n, n) for n in names)


def _opposite(x: Analyzed, y: Analyzed, qualifiers: bool = False) -> list[str]:
    """The axes on which the two statements take opposite poles (enabled / disabled, sync / async,
    ...), plus words that are another word with a negative prefix (authenticated /
    unauthenticated). With ``qualifiers``, subject qualifiers count too ("Public endpoints" /
    "Private endpoints": not a contradiction, but not the same statement either)."""
    axes_x: dict[str, set[int]] = {}
    axes_y: dict[str, set[int]] = {}
    for axis, pole in (x.polar | x.qualifiers) if qualifiers else x.polar:
        axes_x.setdefault(axis, set()).add(pole)
    for axis, pole in (y.polar | y.qualifiers) if qualifiers else y.polar:
        axes_y.setdefault(axis, set()).add(pole)
    out = [axis for axis in axes_x.keys() & axes_y.keys()
           if len(axes_x[axis]) == 1 and len(axes_y[axis]) == 1 and axes_x[axis] != axes_y[axis]]
    # generic negative prefixes: authenticated / unauthenticated, blocking / non-blocking
    wx, wy = x.words, y.words
    for a, b in ((wx, wy), (wy, wx)):
        for w in a:
            for p in _NEGATIVE_PREFIXES:
                if w.startswith(p) and len(w) - len(p) >= 4 and w[len(p):] in b and w not in b:
                    out.append(w[len(p):])
    return out


def _numbers_differ(x: Analyzed, y: Analyzed) -> bool:
    """:func:`quantities_differ` of the two statements' numbers."""
    return quantities_differ(x.numbers, y.numbers)


_SIZE_UNITS = ("KB", "MB", "GB", "TB", "Ki", "Mi", "Gi")


def quantity_kind(q: str) -> str:
    """The kind of a :func:`numbers` value: ``duration`` (``"900s"``), ``size`` (``"10MB"``), ``percent``,
    ``version`` (dotted: ``"1.75.0"``, ``"8.0"``) or ``count`` (a bare number, ``"3x"``, anything else)."""
    if q.endswith("s") and q[:-1].replace(".", "", 1).isdigit():
        return "duration"
    if q.endswith(_SIZE_UNITS):
        return "size"
    if q.endswith("%"):
        return "percent"
    if q.count(".") >= 1 and q.replace(".", "").isdigit():
        return "version"
    return "count"


def quantities_differ(xs, ys) -> bool:
    """Both sides name a quantity of one kind (:func:`quantity_kind`) with values the other lacks, each
    way: "3 retries" / "5 retries" differ; "3 worker threads" / "results kept for 5 days" (a count and a
    duration) do not, and an extra number on one side is more detail, not a different value."""
    if not xs or not ys:
        return False
    kinds = {quantity_kind(q) for q in xs} & {quantity_kind(q) for q in ys}
    for kind in kinds:
        cx = Counter(q.rstrip("x") for q in xs if quantity_kind(q) == kind)
        cy = Counter(q.rstrip("x") for q in ys if quantity_kind(q) == kind)
        if cx - cy and cy - cx:
            return True
    return False


def quantity_text(q: str) -> str:
    """A :func:`numbers` value as people write it: ``"432000s"`` -> ``"5 days"``, ``"90s"`` ->
    ``"90 seconds"``, ``"0.25s"`` -> ``"250 ms"``, ``"3x"`` -> ``"3 times"``; other values unchanged."""
    if quantity_kind(q) == "duration":
        sec = float(q[:-1])
        for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second")):
            if sec >= size and sec % size == 0:
                n = int(sec // size)
                return f"{n} {unit}{'s' if n != 1 else ''}"
        return f"{sec * 1000:g} ms"
    if q.endswith("x") and q[:-1].replace(".", "", 1).isdigit():
        return f"{q[:-1]} times"
    return q


#: verbs that carry little meaning of their own: swapping one for another keeps the claim
_LIGHT_VERBS = frozenset(_stem(w) for w in "use go make do get have take work style write come".split())


def _single_swap(x: Analyzed, y: Analyzed) -> tuple[str, str] | None:
    """The two statements are the same but for one content word each ("Feature branches are deleted
    after merge" / "... kept after merge"): that word is then what the statements are about."""
    if len(x.content) < 3 or abs(len(x.content) - len(y.content)) > 0:
        return None
    diff = [op for op in _opcodes(x, y) if op[0] != "equal"]
    if len(diff) != 1 or diff[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = diff[0]
    if i2 - i1 != 1 or j2 - j1 != 1 or "#" in (x.content[i1], y.content[j1]):
        return None
    if x.content[i1] in _LIGHT_VERBS or y.content[j1] in _LIGHT_VERBS:
        return None  # "uses X" / "is written with X" / "goes through X" say the same
    if x.flags[i1] and y.flags[j1] and _matched(x.content[i1], x, y):
        return None  # OrderValidator / OrderValidator.validate
    return _display(x, [x.content[i1]]), _display(y, [y.content[j1]])


def material_difference_analyzed(x: Analyzed, y: Analyzed) -> str | None:
    """The reason two (similar) statements must not be merged, or None: negation on one side only,
    opposite predicates, a different identifier on each side (one names X where the other names Y;
    one side naming an identifier the other merely omits is not a difference), different numbers,
    or a number on one side only."""
    if x.negations != y.negations:
        side = "first" if x.negations > y.negations else "second"
        return f"negation on one side only (the {side} statement)"
    opp = _opposite(x, y, qualifiers=True)
    if opp:
        return f"opposite predicates ({', '.join(sorted(set(opp)))})"
    ux, uy = _unmatched(x, y), _unmatched(y, x)
    if ux and uy:
        return f"different identifiers: {_display(x, ux)} vs {_display(y, uy)}"
    if ux or uy:
        # one side names an extra identifier: fine as added detail, not when a shared identifier
        # changes role ("Rules are configured in OrderValidator" / "OrderValidator calls RuleRegistry")
        extra_side, extra = (x, ux) if ux else (y, uy)
        for a, b in ((x, y), (y, x)):
            subject = a.content[0] if a.flags and a.flags[0] else None
            if subject and subject not in extra and subject not in b.content[:2] and _matched(subject, a, b):
                return (f"{_display(a, [subject])} is the subject of one statement only, and "
                        f"{_display(extra_side, extra)} is named by one only")
    if _numbers_differ(x, y):
        return f"different numbers: {', '.join(x.numbers)} vs {', '.join(y.numbers)}"
    swap = _single_swap(x, y)
    if swap:
        return f"one word differs: {swap[0]} vs {swap[1]}"
    if Counter(x.numbers) != Counter(y.numbers):
        extra = (Counter(x.numbers) - Counter(y.numbers)) + (Counter(y.numbers) - Counter(x.numbers))
        return f"a number on one side only: {', '.join(sorted(extra.elements()))}"
    return None


def material_difference(a: str, b: str) -> str | None:
    """:func:`material_difference_analyzed` on two texts."""
    return material_difference_analyzed(analyze(a), analyze(b))


def score_analyzed(x: Analyzed, y: Analyzed) -> float:
    """:data:`SCORER` over the two content keys, 0..100."""
    if x.key == y.key:
        return 100.0
    return float(SCORER(x.key, y.key))


def _residual(x: Analyzed, y: Analyzed, drop: frozenset[str] = frozenset()) -> float:
    cx = " ".join(t for t in x.content if t not in drop)
    cy = " ".join(t for t in y.content if t not in drop)
    if not cx or not cy:
        return 0.0
    return float(fuzz.token_set_ratio(cx, cy))


def _opcodes(x: Analyzed, y: Analyzed) -> list[tuple[str, int, int, int, int]]:
    return SequenceMatcher(None, x.content, y.content, autojunk=False).get_opcodes()


def _subject_differs(x: Analyzed, y: Analyzed, ops) -> bool:
    """The statements start with different subjects: the first aligned block is a replacement at
    the very start ("InventoryClient retries ..." / "PaymentClient retries ...")."""
    if not ops:
        return False
    tag, i1, i2, j1, j2 = ops[0]
    return tag == "replace" and i1 == 0 and j1 == 0


_DEFINITE = re.compile(r"\b(?:is|are) (?:the|our|its) (?!same\b)")


def _definite(x: Analyzed) -> bool:
    """"X is the entry point": a role only one thing fills."""
    return bool(_DEFINITE.search(x.normalized))


def _object_swap(x: Analyzed, y: Analyzed, ops, ux: list[str], uy: list[str]) -> str | None:
    """Same subject and predicate, a different object: after a shared start, the differing region
    (first to last differing aligned token) holds the identifiers that differ, and the predicate
    words in front of them agree (one side's are a subset of the other's: "registered through X" /
    "registered centrally through Y"); or a single differing word after an article or preposition
    ("hashed with argon2" / "hashed with bcrypt"). Not for predicates that take many objects
    ("calls", "reviews", "depends on") and not when the statements start differently (another
    subject) -- except a definite description ("X is the entry point" / "Y is the entry point")."""
    diff = [op for op in ops if op[0] != "equal"]
    if diff and diff[0][0] in ("insert", "delete") and diff[0][1] == 0 and diff[0][3] == 0 and len(diff) > 1:
        diff = diff[1:]  # a qualifier in front of the subject ("New validation rules" / "Rules")
    if not diff:
        return None
    i1, j1 = diff[0][1], diff[0][3]
    i2, j2 = diff[-1][2], diff[-1][4]
    bx, by = x.content[i1:i2], y.content[j1:j2]
    if not bx or not by or diff[0][0] != "replace":
        # one side inserts words before the difference: another predicate ("caches rendered
        # reports in Redis" / "renders reports to PDF")
        return None
    sx, sy = set(ux), set(uy)
    if (i2 < len(x.content) and x.prev[i2] in _AUXILIARIES) or (j2 < len(y.content) and y.prev[j2] in _AUXILIARIES):
        # the difference is followed by a verb: it is part of the subject ("Kafka topic orders.v1
        # has 12 partitions" / "Kafka topic orders.v2 has 12 partitions")
        return None
    if i1 == 0 or j1 == 0:
        if len(diff) == 1 and sx and sy and i2 < len(x.content) and _definite(x) and _definite(y):
            return f"different identifiers in the same role: {_display(x, ux)} vs {_display(y, uy)}"
        return None
    if any(tok in _MULTI_VALUED for tok in x.content[max(0, i1 - 2):i1]):
        # "A calls X" / "A calls Y" are both true -- unless the two share the role after the
        # object ("uses the chi router" / "uses the gin router")
        if not (len(diff) == 1 and i2 < len(x.content) and j2 < len(y.content)):
            return None
    if sx and sy:
        if not (sx <= set(bx) and sy <= set(by)):
            return None

        def predicate(a: Analyzed, lo: int, hi: int) -> set[str]:
            out = set()
            for k in range(lo, hi):
                if a.flags[k] or a.content[k] == "#":
                    break
                out.add(a.content[k])
            return out

        px, py = predicate(x, i1, i2), predicate(y, j1, j2)
        if px <= py or py <= px or (x.prev[i1] in _DETERMINERS and y.prev[j1] in _DETERMINERS):
            # (after an article or preposition on both sides the region is the object itself)
            return f"different object: {_display(x, ux)} vs {_display(y, uy)}"
        return None
    if len(diff) == 1 and len(bx) == 1 and len(by) == 1 and "#" not in (bx[0], by[0]) \
            and not bx[0].startswith("~") and not by[0].startswith("~") \
            and x.prev[i1] in _DETERMINERS and y.prev[j1] in _DETERMINERS:
        return f"different object: {_display(x, bx)} vs {_display(y, by)}"
    return None


def conflict_reason_analyzed(x: Analyzed, y: Analyzed) -> tuple[str, str] | None:
    """``(severity, reason)`` when the two statements make incompatible claims about the same
    subject, else None. ``high``: negation on one side only or opposite predicates, with the same
    identifiers; ``medium``: a different object identifier for the same subject and predicate, or a
    different number/version for the same quantity. Two kinds of difference at once (another
    identifier *and* another number, say) mean another target: related, not a conflict."""
    if not x.content or not y.content:
        return None
    ux, uy = _unmatched(x, y), _unmatched(y, x)
    swapped = bool(ux and uy)
    neg = x.negations != y.negations
    opp = _opposite(x, y)
    nums = _numbers_differ(x, y)
    ops = _opcodes(x, y)
    if _subject_differs(x, y, ops) and not swapped:
        return None
    if neg or opp:
        if nums:
            return None
        if neg:
            more, other = (x, y) if x.negations > y.negations else (y, x)
            if more.neg_clause is not None:
                # compare the negated clause, not the whole statement, with the other statement
                more = more.neg_clause
                if _subject_differs(more, other, _opcodes(more, other)):
                    return None
            if _unmatched(more, other) and _unmatched(other, more):
                return None  # the negation is about something else
            if _residual(more, other) < CONFLICT_THRESHOLD:
                return None
            # the negated word must be something the other statement asserts ("not reloaded" says
            # nothing against "is read")
            if more.neg_heads and not any(h in other.words or h in other.content for h in more.neg_heads):
                return None
            side = "first" if x.negations > y.negations else "second"
            return "high", f"negation on one side only (the {side} statement) about the same subject"
        if swapped or _residual(x, y) < CONFLICT_THRESHOLD:
            return None
        return "high", f"opposite predicates ({', '.join(sorted(set(opp)))}) about the same subject"
    if swapped:
        if nums:
            return None
        why = _object_swap(x, y, ops, ux, uy)
        if why and _residual(x, y, frozenset(ux) | frozenset(uy)) >= CONFLICT_THRESHOLD:
            return "medium", why
        return None
    if nums:
        if _residual(x, y) >= NUMBER_CONFLICT_THRESHOLD and not _subject_differs(x, y, ops):
            return "medium", (f"different numbers for the same quantity: {', '.join(map(quantity_text, x.numbers))} "
                              f"vs {', '.join(map(quantity_text, y.numbers))}")
        return None
    why = _object_swap(x, y, ops, ux, uy)
    if why and _residual(x, y) >= CONFLICT_THRESHOLD:
        return "medium", why
    return None


def conflict_reason(a: str, b: str) -> tuple[str, str] | None:
    """:func:`conflict_reason_analyzed` on two texts."""
    return conflict_reason_analyzed(analyze(a), analyze(b))


def judge_analyzed(x: Analyzed, y: Analyzed) -> PairJudgement:
    """Classify a pair: ``conflict`` when :func:`conflict_reason_analyzed` finds one; else
    ``duplicate`` when the score reaches :data:`DUPLICATE_THRESHOLD` and there is no
    :func:`material_difference_analyzed`; else ``related`` when the score reaches
    :data:`RELATED_THRESHOLD`, the two share an identifier or start with the same content word;
    else ``unrelated``. ``reasons`` holds the conflict reason or the material difference."""
    if x.normalized == y.normalized:
        return PairJudgement("duplicate", 100.0, ("same normalised text",))
    score = score_analyzed(x, y)
    conflict = conflict_reason_analyzed(x, y)
    if conflict:
        return PairJudgement("conflict", score, (f"{conflict[0]}: {conflict[1]}",))
    diff = material_difference_analyzed(x, y)
    if score >= DUPLICATE_THRESHOLD and diff is None:
        return PairJudgement("duplicate", score, ())
    shared = {_id_key(i) for i in x.identifiers} & {_id_key(i) for i in y.identifiers}
    same_lead = bool(x.content) and bool(y.content) and x.content[0] == y.content[0]
    if score >= RELATED_THRESHOLD or shared or same_lead:
        return PairJudgement("related", score, (diff,) if diff else ())
    return PairJudgement("unrelated", score, ())


def judge_pair(a: str, b: str) -> PairJudgement:
    """:func:`judge_analyzed` on two texts."""
    return judge_analyzed(analyze(a), analyze(b))

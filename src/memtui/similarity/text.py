"""Text keys shared by every similarity consumer (issue 10, item 8).

* :func:`normalize` -- the exact-duplicate key (NFKC, casefold, punctuation to spaces);
  :func:`fingerprint` -- OpenRefine's key (normalised tokens, deduplicated, sorted).
* :data:`STOPWORDS` and :func:`match_key` -- the content-word key TF-IDF and rapidfuzz read.
* :func:`stem` -- the Snowball English stemmer (``snowballstemmer``, memoised).
* :func:`common_word` -- an everyday English word ("Sessions", "Network") rather than a product or tool
  name ("Redis", "Memcached", "Okta"), by ``wordfreq``'s Zipf frequency (data shipped in its wheel).
* :func:`identifier_key` -- one spelling for ``user_id`` / ``userId`` / ``UserID`` / ``user-id``; with
  :func:`joined_word_pairs` of the prose, "user id" matches too.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
import snowballstemmer

_PUNCT = re.compile(r"[^\w\s]+")
_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Exact-duplicate key: NFKC, casefolded, punctuation and backticks replaced by spaces,
    whitespace collapsed. ``"Rules are registered through `RuleRegistry`."`` ->
    ``"rules are registered through ruleregistry"``."""
    t = unicodedata.normalize("NFKC", text or "").casefold()
    t = _PUNCT.sub(" ", t)
    return _WS.sub(" ", t).strip()


def fingerprint(text: str) -> str:
    """OpenRefine fingerprint key: the :func:`normalize` tokens, deduplicated, sorted, joined by one
    space. ``"RuleRegistry registers rules, rules!"`` -> ``"registers ruleregistry rules"``."""
    return " ".join(sorted(set(normalize(text).split())))


STOPWORDS = frozenset(
    "a an the is are was were be been being to of in on at by for with via through from as and or that "
    "this these those it its into per each all any should must can will would may might do does did has "
    "have had uses use used using".split()
)
"""Dropped from match keys. Negations ("not", "never", "no") are deliberately *not* here."""

_PREFIX = 5
_LONG = 11
_LONG_PREFIX = 8


def key_of_normalized(normalized: str) -> str:
    """:func:`match_key` of text already passed through :func:`normalize`."""
    stop = STOPWORDS
    return " ".join([
        (tok[:_PREFIX] if len(tok) < _LONG else tok[:_LONG_PREFIX]) if tok.isalpha() else tok
        for tok in normalized.split() if tok not in stop
    ])


def fingerprint_of_normalized(normalized: str) -> str:
    """:func:`fingerprint` of a text whose :func:`normalize` is ``normalized``, without normalising again."""
    return " ".join(sorted(set(normalized.split())))


def match_key(text: str) -> str:
    """The string scored by rapidfuzz and vectorised by TF-IDF: the normalised text without stop words;
    tokens with a digit or ``_`` kept whole; words of up to 10 letters cut to 5, longer ones (mostly
    identifiers) to 8.

    >>> match_key("Rules are registered through RuleRegistry.")
    'rules regis ruleregi'
    """
    return key_of_normalized(normalize(text or ""))


_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Snowball (Porter 2) English stem of a lower-case word: ``registered`` -> ``regist``."""
    return _STEMMER.stemWord(word)


_ID_SEP = re.compile(r"[\s_\-./:]+")


@lru_cache(maxsize=200_000)
def identifier_key(ident: str) -> str:
    """``user_id``, ``userId``, ``UserID``, ``user-id``, ``user id`` -> ``userid``."""
    return _ID_SEP.sub("", unicodedata.normalize("NFKC", ident).casefold()).strip("`()")


_WORD = re.compile(r"[a-z0-9]+")


def joined_word_pairs(normalized: str) -> frozenset[str]:
    """Adjacent words of normalised prose joined (``"user id"`` -> ``userid``): matched against the
    other statement's :func:`identifier_key` values only, never against each other."""
    words = _WORD.findall(normalized)
    return frozenset(words[i] + words[i + 1] for i in range(len(words) - 1))


COMMON_ZIPF = 4.0
"""Zipf frequency (log10 per billion words, wordfreq's English lists) from which a capitalised word is
an everyday word, not a name: "Vault" 3.9, "Snowflake" 3.3, "Redis" 2.0 are names; "Sessions" 4.5,
"Network" 5.0, "Each" 5.7 are not."""


@lru_cache(maxsize=200_000)
def zipf(word: str) -> float:
    """wordfreq's English Zipf frequency of a lower-case word (log10 per billion words; 0 when unseen)."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en")


def common_word(word: str) -> bool:
    """True when the lower-case ``word`` is an everyday English word (:func:`zipf` >= :data:`COMMON_ZIPF`)."""
    return zipf(word) >= COMMON_ZIPF


def word_weight(word: str) -> float:
    """Information weight of a lower-case word for alignment, ``max(0.5, 8 - zipf(word))``: "the" 0.5,
    "release" 2.9, "redis" 6.0, a word wordfreq has never seen 8.0."""
    return max(0.5, 8.0 - zipf(word))

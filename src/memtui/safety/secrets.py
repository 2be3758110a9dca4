"""Secret scanning of memory text (issue 9, item 1; design §22.4 "secrets").

detect-secrets runs in-process: its maintained token patterns (AWS, GitHub, GitLab, Slack,
Stripe, ... — the ``denylist`` regexes of its regex plugins), its private-key headers, its JWT
validity check, its basic-auth URL pattern and its heuristic filters (templated values,
``$VAR``, indirect references, sequential strings, UUIDs). Around it, memtui's own curated
detectors for what agents write into memory:

* keyword assignments (``password = hunter2``, ``api_key: "..."``) — unquoted values too,
  since memory is prose and config, not source;
* secrets written as prose (``the staging DB password is hunter2``, ``token: abc123...``,
  ``passwd for X is Y``);
* high-entropy Base64 strings, tuned so that identifiers (camelCase, dotted, snake), file
  paths, hex (commit SHAs of any length, hashes) and UUIDs are not flagged.

Public API: :func:`find_secrets`, :func:`redact_secrets`, :class:`SecretHit`,
:data:`SCANNER_VERSION` (detect-secrets' version + a hash of this module's settings; the rescan
job runs again whenever it changes). Pure: no store, no I/O.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from functools import lru_cache

from detect_secrets.__version__ import VERSION as _DS_VERSION
from detect_secrets.filters import heuristic
from detect_secrets.plugins import (artifactory, aws, azure_storage_key, discord, github_token, gitlab_token,
                                    jwt, mailchimp, npm, openai, private_key, pypi_token, sendgrid, slack,
                                    square_oauth, stripe, telegram_token, twilio)

__all__ = ["SecretHit", "find_secrets", "redact_secrets", "SCANNER_VERSION", "DETECTOR_VERSION"]

#: Bump when a detector below changes in a way the settings hash does not show.
DETECTOR_VERSION = "1"

#: (detect-secrets plugin class, the human name memtui shows). The plugin's regexes are used as shipped.
_REGEX_PLUGINS = (
    (aws.AWSKeyDetector, "AWS access key"),
    (github_token.GitHubTokenDetector, "GitHub token"),
    (gitlab_token.GitLabTokenDetector, "GitLab token"),
    (slack.SlackDetector, "Slack token"),
    (stripe.StripeDetector, "Stripe key"),
    (openai.OpenAIDetector, "OpenAI key"),
    (pypi_token.PypiTokenDetector, "PyPI token"),
    (npm.NpmDetector, "npm token"),
    (sendgrid.SendGridDetector, "SendGrid key"),
    (twilio.TwilioKeyDetector, "Twilio key"),
    (mailchimp.MailchimpDetector, "Mailchimp key"),
    (square_oauth.SquareOAuthDetector, "Square OAuth secret"),
    (discord.DiscordBotTokenDetector, "Discord bot token"),
    (telegram_token.TelegramBotTokenDetector, "Telegram bot token"),
    (artifactory.ArtifactoryDetector, "Artifactory credentials"),
    (azure_storage_key.AzureStorageKeyDetector, "Azure storage key"),
)

_PRIVATE_KEY = "private key"
_BASIC_AUTH = "basic-auth URL"
_JWT = "JSON Web Token"
_KEYWORD = "password or key assignment"
_PROSE = "password or key in prose"
_ENTROPY = "high-entropy string"

# -- private-key blocks: the header detect-secrets knows, through the END line (or the text's end)
_PK_HEADERS = "|".join(p.pattern for p in private_key.PrivateKeyDetector.denylist)
_PK_BLOCK = re.compile(r"(?:-----)?(?:" + _PK_HEADERS + r")(?:-----)?"
                       r"(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[\sA-Za-z0-9+/=:,-]*)", re.S)

# -- basic-auth URLs: detect-secrets' pattern finds the password; memtui redacts user:password
_BASIC_AUTH_RE = re.compile(r"(?<=://)([^\s:/@'\"`<>{}]+):([^\s@/'\"`<>{}]+)@")

# -- keyword assignments: NAME (= | : | := | =>) VALUE
_SECRET_WORDS = (r"pass(?:word|wd|phrase)?|pwd|secret(?:[_-]?key)?|client[_-]?secret|api[_-]?key|apikey|"
                 r"api[_-]?token|access[_-]?(?:key|token)(?:[_-]?id)?|secret[_-]?access[_-]?key|auth[_-]?token|"
                 r"private[_-]?key|bearer|token|credentials?|db[_-]?pass(?:word)?|passw")
_ASSIGN = re.compile(
    r"(?i)(?<![A-Za-z0-9])((?:[A-Za-z0-9]+[_.-])*(?:" + _SECRET_WORDS + r"))(?:[\"'])?"
    r"\s*(?::=|=>|==|=|:)\s*"
    r"(?P<q>[\"'`]?)(?P<v>[^\s\"'`,;]{3,200})(?P=q)")
# -- prose: "<the X> password (for Y) is Z", "token: Z", "passwd for X is Y"
_PROSE_RE = re.compile(
    r"(?i)\b(pass(?:word|wd|phrase)|pwd|secret|api[ -]?key|access[ -]key|token|credentials?|login)"
    r"(?:\s+(?:for|of|to|on)\s+[\w@./:-]+(?:\s+[\w@./:-]+)?)?"
    r"\s+(?:is|was|are|=|:|is set to|is now)\s+"
    r"(?P<q>[\"'`]?)(?P<v>[^\s\"'`,;]{3,200})(?P=q)")
_BEARER = re.compile(r"(?i)\b(?:bearer|authorization:\s*basic)\s+(?P<v>[A-Za-z0-9._~+/=-]{16,})")

#: Values that are words about a secret, not a secret ("the password is stored in Vault").
_NOT_VALUES = frozenset("""
a an the not never no none null nil true false yes required optional stored kept set read used hashed
encrypted rotated missing empty invalid valid wrong correct same different in on at from to for of by
with via through under here there this that these those it its now then only also still ignored generated
provided supplied configured passed sent given defined loaded taken pulled fetched injected redacted
placeholder example sample dummy test fake changeme secret password token key value string env
environment variable variables config configuration file files mandatory needed necessary available
unset expired revoked handled managed per each every any some all both either neither
""".split())
_PLACEHOLDER = re.compile(r"^(?:<[^>]*>?|\$\{?.*|\{\{.*|%\(?.*|\*+|x{3,}|\.{3,}|…|\[.*\]?|\(.*\)?|"
                          r"(?:your|my|the)[_-].*|.*(?:_here|here)|redacted.*|changeme|example.*|dummy.*|"
                          r"fake.*|test.*|sample.*|placeholder.*|none|null|nil|undefined|true|false|\d{1,4})$",
                          re.I)
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^[A-Z]{3,}$")  # GITHUB_TOKEN, an env var's name
_CODE_REF = re.compile(r"^(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*(?:\(.*)?$|^[A-Za-z_]\w*\(.*$|^[a-z_]+(?:_[a-z]+)+$")
_PATHISH = re.compile(r"^(?:~|\.{1,2})?/|\.(?:py|js|ts|go|rs|java|md|json|ya?ml|toml|txt|env|"
                      r"cfg|ini|sh|rb|kt|cs|php|sql)$", re.I)

# -- high-entropy Base64-ish tokens
_B64_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_.-])([A-Za-z0-9+/_-]{24,}={0,2})(?![A-Za-z0-9+/=_-])")
_B64_CHARSET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-"
_B64_LIMIT = 4.5  # detect-secrets' Base64HighEntropyString default
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PATH_SEGMENT = re.compile(r"^(?:[a-z0-9_.@-]*|(?:[A-Z][a-z0-9]+)+(?:\.\w+)?|\*+)$")
_NODE_ID = re.compile(r"^[A-Z]{1,8}_[A-Za-z0-9]")  # GitHub GraphQL node ids: PVT_kw..., PVTSSF_lA...
_ID_BEFORE = re.compile(r"(?i)(?:\b|[_-])ids?\b[^A-Za-z0-9\n]{0,8}$")
_WORDY = re.compile(r"[A-Z]?[a-z]{3,}")

_SETTINGS = repr((
    DETECTOR_VERSION, [(c.__name__, n, [p.pattern for p in c.denylist]) for c, n in _REGEX_PLUGINS],
    _PK_BLOCK.pattern, _BASIC_AUTH_RE.pattern, _ASSIGN.pattern, _PROSE_RE.pattern, _BEARER.pattern,
    sorted(_NOT_VALUES), _PLACEHOLDER.pattern, _ENV_NAME.pattern, _CODE_REF.pattern, _PATHISH.pattern,
    _PATH_SEGMENT.pattern, _NODE_ID.pattern, _ID_BEFORE.pattern, 'lowercase-words',
    _B64_TOKEN.pattern, _B64_LIMIT, _WORDY.pattern,
))
#: The scanner's identity: detect-secrets' version and a hash of the curated settings above.
SCANNER_VERSION = f"detect-secrets {_DS_VERSION}+memtui.{hashlib.sha256(_SETTINGS.encode()).hexdigest()[:12]}"


@dataclass(frozen=True)
class SecretHit:
    """One secret in a text: its type (a human name such as "AWS access key"), its span
    ``text[start:end]`` and the sha256 hex of the secret (what the store keeps; never the secret)."""

    type: str
    start: int
    end: int
    secret_hash: str


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def _entropy(s: str) -> float:
    n = len(s)
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _is_path(v: str) -> bool:
    """A file or folder path (``src/order/Validator.java``, ``~/.config``), not base64 with slashes."""
    if _PATHISH.search(v):
        return True
    return "/" in v and all(_PATH_SEGMENT.match(seg) for seg in v.split("/"))


def _plausible_value(value: str, quoted: bool, *, prose: bool) -> bool:
    """Whether a keyword's value looks like a secret rather than a word, a name, a path or a placeholder."""
    v = value.rstrip(".)]}>:!?")
    if len(v) < 4 or _PLACEHOLDER.match(v) or v.casefold() in _NOT_VALUES:
        return False
    if heuristic.is_templated_secret(v) or heuristic.is_prefixed_with_dollar_sign(v) \
            or heuristic.is_sequential_string(v) or heuristic.is_potential_uuid(v):
        return False
    if _ENV_NAME.match(v) or _CODE_REF.match(v) or _is_path(v) or "://" in v:
        return False
    if not re.search(r"[A-Za-z0-9]", v):
        return False
    has_digit = any(c.isdigit() for c in v)
    has_symbol = any(not c.isalnum() for c in v)
    mixed = any(c.isupper() for c in v[1:]) and any(c.islower() for c in v)
    if quoted:
        return not (v.isalpha() and v.islower() and prose)
    if re.fullmatch(r"[a-z]+(?:[-_][a-z]+)*", v):
        return False  # lowercase words: "proxy-pass", "authorization-sensitive", "local-dev-secret"
    if v.isalpha() and not mixed:
        return False  # a plain word: "is required", "is swordfish" is too close to prose to call
    if re.fullmatch(r"[A-Za-z]+[A-Z][a-z]+[A-Za-z]*", v) and not has_digit:
        return False  # camelCase identifier: getUserPasswordHash
    return has_digit or has_symbol or mixed


def _keyword_hits(text: str, out: list[tuple[int, int, str]]) -> None:
    for rx, kind in ((_ASSIGN, _KEYWORD), (_PROSE_RE, _PROSE)):
        for m in rx.finditer(text):
            v = m.group("v")
            if heuristic.is_indirect_reference(text[m.start():m.end() + 40].splitlines()[0] if text else ""):
                continue
            if _plausible_value(v, bool(m.group("q")), prose=kind == _PROSE):
                s = m.start("v")
                e = s + len(v.rstrip(".)]}>:!?"))
                out.append((s, e, kind))
    for m in _BEARER.finditer(text):
        v = m.group("v")
        if _plausible_value(v, False, prose=False):
            out.append((m.start("v"), m.end("v"), _KEYWORD))


def _entropy_hits(text: str, out: list[tuple[int, int, str]]) -> None:
    for m in _B64_TOKEN.finditer(text):
        tok = m.group(1)
        core = tok.rstrip("=")
        if _HEX.match(core) or _UUID.search(tok):
            continue  # commit SHAs, content hashes, UUIDs
        if _is_path(core):
            continue  # a path
        if not (re.search(r"\d", core) and re.search(r"[A-Z]", core) and re.search(r"[a-z]", core)):
            continue  # random base64 of 24+ characters nearly always mixes all three
        parts = re.split(r"[_\-/+]", core)
        if sum(len(w.group()) for p in parts for w in _WORDY.finditer(p)) >= 0.6 * len(core):
            continue  # made of words: an identifier (getUserPasswordHash2FactorAuthToken)
        if _NODE_ID.match(core) or _ID_BEFORE.search(text, max(0, m.start(1) - 30), m.start(1)):
            continue  # an id the line names as such ("--field-id X", "Status field ID | X"), a GitHub node id
        if _entropy(core) <= _B64_LIMIT:
            continue
        out.append((m.start(1), m.end(1), _ENTROPY))


def _regex_hits(text: str, out: list[tuple[int, int, str]]) -> None:
    for cls, name in _REGEX_PLUGINS:
        for rx in cls.denylist:
            for m in rx.finditer(text):
                if m.re.groups:
                    spans = [m.span(i) for i in range(1, m.re.groups + 1) if m.group(i)]
                else:
                    spans = [m.span()]
                for s, e in spans:
                    if e > s:
                        out.append((s, e, name))
    for m in _PK_BLOCK.finditer(text):
        out.append((m.start(), m.end(), _PRIVATE_KEY))
    for m in _BASIC_AUTH_RE.finditer(text):
        pw = m.group(2)
        if not (_PLACEHOLDER.match(pw) or heuristic.is_templated_secret(pw) or pw.startswith("$")):
            out.append((m.start(1), m.end(2), _BASIC_AUTH))
    for m in jwt.JwtTokenDetector.denylist[0].finditer(text):
        if jwt.JwtTokenDetector.is_formally_valid(m.group(0)):
            out.append((m.start(), m.end(), _JWT))


# a cheap gate: text with none of these cannot hold a hit of the keyword/prose/regex kinds
_GATE = re.compile(r"(?i)pass|pwd|secret|key|token|credential|login|bearer|basic|://|private|AKIA|ASIA|gh[pousr]_|"
                   r"glpat|xox|sk_|rk_|pk_|eyJ|npm_|pypi-|SG\.|SK[0-9a-f]|AIza|AKC|AP[0-9A-Z]|\d{8,10}:|"
                   r"[A-Za-z0-9+/_-]{24}")


# the same gate for ASCII text, lowercased first: case-sensitive on the lowercased text, each branch
# matches exactly where the case-insensitive one matches in the original (ASCII letters fold one to one),
# about three times faster (issue 11, item 9: every imported statement passes through here)
_GATE_ASCII_LOWER = re.compile(r"pass|pwd|secret|key|token|credential|login|bearer|basic|://|private|akia|asia|"
                               r"gh[pousr]_|glpat|xox|sk_|rk_|pk_|eyj|npm_|pypi-|sg\.|sk[0-9a-f]|aiza|akc|"
                               r"ap[0-9a-z]|\d{8,10}:")
_GATE_ASCII_RUN = re.compile(r"[a-z0-9+/_-]{24}")


def _gated(text: str) -> bool:
    """Whether ``text`` passes :data:`_GATE` (may hold a secret and must be scanned)."""
    if not text.isascii():
        return _GATE.search(text) is not None
    low = text.lower()
    return _GATE_ASCII_LOWER.search(low) is not None or _GATE_ASCII_RUN.search(low) is not None


@lru_cache(maxsize=4096)
def _scan(text: str) -> tuple[SecretHit, ...]:
    if not text or not _gated(text):
        return ()
    spans: list[tuple[int, int, str]] = []
    _regex_hits(text, spans)
    _keyword_hits(text, spans)
    _entropy_hits(text, spans)
    if not spans:
        return ()
    # merge overlaps: the earliest, then the longest span wins; a named type beats a generic one
    generic = (_ENTROPY, _PROSE, _KEYWORD)
    spans.sort(key=lambda t: (t[0], -(t[1] - t[0]), t[2] in generic))
    merged: list[list] = []
    for s, e, kind in spans:
        if merged and s < merged[-1][1]:
            last = merged[-1]
            if e > last[1]:
                last[1] = e
            if last[2] in generic and kind not in generic:
                last[2] = kind
            continue
        merged.append([s, e, kind])
    return tuple(SecretHit(kind, s, e, _hash(text[s:e])) for s, e, kind in merged)


def find_secrets(text: str) -> list[SecretHit]:
    """The secrets in ``text``, in order, non-overlapping. Empty for None or empty text."""
    if not text:
        return []
    return list(_scan(text))


def redact_secrets(text: str) -> tuple[str, list[SecretHit]]:
    """``text`` with each secret replaced by ``<redacted: TYPE>``, and the hits (spans in the original)."""
    hits = find_secrets(text)
    if not hits:
        return text, []
    parts, pos = [], 0
    for h in hits:
        parts.append(text[pos:h.start])
        parts.append(f"<redacted: {h.type}>")
        pos = h.end
    parts.append(text[pos:])
    return "".join(parts), hits

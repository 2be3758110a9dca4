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
  paths, hex (commit SHAs of any length, hashes) and UUIDs are not flagged;
* passwords written as words (issue 21 item 4): a plain word, a quoted phrase or a passphrase after a
  password/secret/passphrase cue in English, German, French, Spanish, Italian, Portuguese or Dutch
  ("the password is swordfish", "Passwort für die Datenbank: Geheim123!", "Use secret 'swordfish'"),
  credentials on a command line (``mysql -pX``, ``curl -u user:X``, ``--password X``, ``sshpass -p X``,
  ``redis-cli -a X``, ``htpasswd -b F user X``, SQL ``PASSWORD 'X'``) and in connection strings
  (``Password=X;``, libpq ``password=X``, ``?password=X``). Measured by ``bench/secrets.py``.

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

__all__ = ["SecretHit", "find_secrets", "scan_cached", "redact_secrets", "SCANNER_VERSION", "DETECTOR_VERSION"]

#: Bump when a detector below changes in a way the settings hash does not show.
DETECTOR_VERSION = "2"  # 2: issue 21 (passwords written as words; the gate by kind)

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
_WORDS = "password written as words"
_CLI = "password on a command line"
_CONN = "password in a connection string"

# -- private-key blocks: the header detect-secrets knows, through the END line (or the text's end)
_PK_HEADERS = "|".join(p.pattern for p in private_key.PrivateKeyDetector.denylist)
_PK_BLOCK = re.compile(r"(?:-----)?(?:" + _PK_HEADERS + r")(?:-----)?"
                       r"(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[\sA-Za-z0-9+/=:,-]*)", re.S)

# -- basic-auth URLs: detect-secrets' pattern finds the password; memtui redacts user:password
_BASIC_AUTH_RE = re.compile(r"(?<=://)([^\s:/@'\"`<>{}]*):([^\s@/'\"`<>{}]+)@")  # the user may be empty: redis://:pw@

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

# -- passwords written as words (issue 21 item 4): a cue, an optional qualifier that starts with a
# preposition ("for the jenkins user", "für die Datenbank", "de la base de données"), a copula, a value
_PW_CUE = (r"pass(?:word|wort|phrase|wd|code)|kennwort|wachtwoord|mot\s+de\s+passe|phrase\s+secr[eè]te|"
           r"contrase[ñn]a|clave|senha|(?:shared\s+|client\s+|webhook\s+)?secret(?:\s+(?:phrase|key))?|geheimnis|"
           r"(?:db|database|admin|root|user)\s+pass|pwd|pw")
_PREP = (r"for|to|of|on|in|at|from|für|fuer|vom|von|des|der|den|dem|de|du|del|della|dello|da|do|dos|das|pour|"
         r"para|van|voor|di")
# whose password, after the cue in French, Spanish or German order ("le mot de passe root est ...")
_ROLE = (r"(?:admin|administrator|administrateur|administrador|root|user|master|default|initial|temporary|temp|db|"
         r"database|sudo|wifi|wlan|vpn|ssh|smtp|ftp|sa|superuser|app|service)(?![\w-])")
_COPULA = (r"(?:(?<!\w)(?:(?:was\s+|has\s+been\s+|is\s+)?(?:changed|set)\s+to|is\s+now|is\s+still|"
           r"(?:is|ist|est|es|lautet)\s*:|is|was|are|ist|lautet|est|es|è|é|era|será|sera)(?!\w)|['’]s|->|→|=>|:=|=|:)")
_QUOTES = "\"'`«»“”‘’„"
_Q_OPEN, _Q_CLOSE = "\"'`«“‘„", "\"'`»”’“"
_PW_VALUE = (r"(?:(?P<q>[\"'`«“‘„])\s*(?P<qv>[^\"'`«»“”‘’„\n]{1,80}?)\s*[\"'`»”’“]"
             r"|(?P<v>[^\s\"'`«»“”‘’„,;]{3,200}))")
_PW_PROSE = re.compile(
    r"(?i)(?<![\w-])(?P<cue>" + _PW_CUE + r")(?![\w-])(?:\s+" + _ROLE + r")?"
    r"(?:\s+(?:" + _PREP + r")(?:\s+[\w@./-]+(?![\w@./-])){1,4}?)?(?:\s*\([^()\n]{1,40}\))?"
    r"\s*(?:" + _COPULA + r")\s*" + _PW_VALUE)
# an assignment to a key that ends in a password cue ("PGPASSWORD=walrus", "client_secret: waterfall")
_PW_ASSIGN = re.compile(r"(?i)(?<![\w.$-])(?P<key>[A-Za-z0-9_.-]*?(?:pass(?:word|wd|phrase)?|pwd|pw|secret|passwort|kennwort))"
                        r"[\"']?(?P<op>\s*(?::=|=|:)[ \t]*)(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,80})(?P=q)"
                        r"|(?P<v>[^\s\"'`,;]{3,200}))")
# a passphrase of three words or more after a colon or "is" ("Passphrase: a cold wind from the north")
_PW_PHRASE = re.compile(r"(?i)(?<![\w-])(?:pass\s*phrase|phrase\s+secr[eè]te|secret\s+phrase|frase\s+secreta)"
                        r"\s*(?:is|ist|est|es|:|=)\s*(?P<v>[^\W\d_][^.,;:!?()\n\"'`«»“”]{4,80})")
# a cue and a quoted value with no copula ("Use secret 'swordfish'", "WITH PASSWORD 'x'", "IDENTIFIED BY 'x'")
_PW_QUOTED = re.compile(r"(?i)(?<![\w-])(?:" + _PW_CUE + r"|identified\s+by)\s+"
                        r"(?P<q>[\"'`«“‘„])(?P<qv>[^\"'`«»“”‘’„\n]{1,80}?)[\"'`»”’“]")
# a credential pair or an instruction ("user admin and password letmein", "use password pelican when ...")
_PW_PAIR = re.compile(r"(?i)(?:\b(?:user(?:name)?|login|account)\s+[\w@.-]+\s*(?:,|/|and|und|et|y)?\s*"
                      r"|\b(?:use|enter|type|with|mit|avec|con|usa|utilisez|verwende)\s+(?:the\s+|das\s+|le\s+|la\s+)?)"
                      r"(?:" + _PW_CUE + r"|pass)\s+(?P<v>[^\s\"'`,;:=]{3,200})")
# the value first ("use 'swordfish' as the password", "Use walnut as the password for ...")
_PW_AS = re.compile(r"(?i)\b(?:use|set|enter|type|try|with)\s+(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,80})(?P=q)"
                    r"|(?P<v>[^\s\"'`,;:=]{3,200}))\s+as\s+(?:the\s+|a\s+|your\s+|my\s+)?(?:\w+\s+)?(?:" + _PW_CUE + r")\b")
# setting it ("Set the password to periwinkle", "changed the root password to X")
_PW_SET = re.compile(r"(?i)\b(?:set|change|changed|reset|update|updated)\s+(?:the\s+|its\s+|a\s+)?(?:\w+\s+)?"
                     r"(?:" + _PW_CUE + r")\s+to\s+(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,80})(?P=q)"
                     r"|(?P<v>[^\s\"'`,;:=]{3,200}))")
# a credential pair after a cue ("The credentials are admin/blackcurrant", "Login: admin / huckleberry")
_PW_CRED = re.compile(r"(?i)\b(?:credentials?|logins?|zugangsdaten|anmeldedaten|identifiants|credenciales)"
                      r"(?:\s+(?:for|of|für|pour|para)(?:\s+[\w@./-]+){1,3})?\s*(?:are|is|sind|ist|sont|son|:|=)\s*"
                      r"[`'\"]?[\w.@-]{2,40}[`'\"]?\s*[/:]\s*[`'\"]?(?P<v>[^\s`'\",;/]{3,200})")
# command lines
_CLI_RES = (  # (words one of which the lowercased text must hold, the pattern)
    (("mysql", "mariadb"),
     re.compile(r"(?i)\b(?:mysql\w*|mariadb\w*)\b[^\n|;&]*?\s-p(?P<q>['\"]?)(?P<v>[^\s'\"-][^\s'\"]{2,200})(?P=q)")),
    (("sshpass", "login"),
     re.compile(r"(?i)\b(?:sshpass|(?:docker|podman|nerdctl|helm\s+registry|oras|buildah|skopeo)\s+login)\b"
                r"[^\n|;&]*?\s-p\s+(?P<q>['\"]?)(?P<v>[^\s'\"-][^\s'\"]{2,200})(?P=q)")),
    (("sqlcmd", "bcp", "osql", "isql"),
     re.compile(r"\b(?:sqlcmd|bcp|osql|isql)\b[^\n|;&]*?\s-P\s*(?P<q>['\"]?)(?P<v>[^\s'\"-][^\s'\"]{2,200})(?P=q)")),
    (("redis-cli",),
     re.compile(r"(?i)\bredis-cli\b[^\n|;&]*?\s-a\s+(?P<q>['\"]?)(?P<v>[^\s'\"-][^\s'\"]{2,200})(?P=q)")),
    ((" -u", "--user", " -a", "--auth"),
     re.compile(r"(?i)\b(?:curl|wget|http|https|xh|httpie|ab|git)\b[^\n|;&]*?\s(?:-u|--user|-a|--auth)(?:=|\s+)"
                r"(?P<q>['\"]?)[^\s:'\"/]+:(?P<v>[^\s'\"@]{3,200})(?P=q)(?=[\s'\"]|$)")),
    (("htpasswd",),
     re.compile(r"(?i)\bhtpasswd\s+(?:-\w+\s+)*-\w*b\w*\s+(?:-\w+\s+)*\S+\s+\S+\s+(?P<q>['\"]?)(?P<v>[^\s'\"]{3,200})(?P=q)")),
    (("--pass", "--db-pass"),
     re.compile(r"(?i)(?<![\w-])--(?:password|passwd|pass|db-password)(?:=|\s+)(?P<q>['\"]?)"
                r"(?P<v>[^\s'\"-][^\s'\"]{2,200})(?P=q)")),
)
_CLI_GATE = re.compile("|".join(re.escape(w) for words, _rx in _CLI_RES for w in words))
#: lowercased text without any of these holds no password cue of the word rules
_CUE_GATE = re.compile(r"pass|pw|secr|kennwort|wachtwoord|contrase|clave|senha|geheim|identified")
_CRED_WORDS = ("credential", "login", "zugangsdaten", "anmeldedaten", "identifiants", "credenciales")
# connection strings: ADO/ODBC ("Server=..;Password=x;"), libpq ("host=db password=x"), URL queries ("?password=x")
_CONN_CONTEXT = re.compile(r"(?i)\b(?:server|host|data\s+source|user\s+id|uid|dbname|database|initial\s+catalog)\s*=")
_CONN_RES = (
    re.compile(r"(?i)(?:^|[;\s\"'])(?:password|pwd|passwd)\s*=\s*(?P<q>['\"]?)(?P<v>[^;\s'\"&]{3,200})(?P=q)"),
    re.compile(r"(?i)[?&;](?:password|pwd|passwd|pass)=(?P<q>)(?P<v>[^&;\s'\"#]{3,200})"),
)

#: Words that stand where a written password would but are about it: function words and the usual
#: adjectives, nouns and type names after "password is/:" in English, German, French and Spanish.
_NOT_WORD_VALUES = _NOT_VALUES | frozenset("""
optional mandatory required requires strong weak short long empty blank hidden visible broken wrong right
ok okay fine good bad safe unsafe secure insecure plain plaintext clear cleartext public private sensitive
protected unknown same below above following elsewhere shared unique random hard easy too very
case field fields reset hash hashes hashing salt salted manager managers policy policies prompt prompts
dialog form input length strength complexity rotation change changes expiry history store storage vault
file flag flags option options parameter parameters argument arguments param params variable var vars
secrets passwords tokens key keys values str int bool text type types object number boolean bytes char
varchar json undefined any auth login user users field_name name names never always ask asks asked
str| none| twice again once first last next previous current new old default defaults mine yours ours
theirs his her their our your whatever anything something nothing everything someone somebody
present absent active inactive enabled disabled ready pending unchanged unavailable known protected
ist nicht kein keine wird wurde der die das den dem des ein eine einen im auf mit von zu und oder
erforderlich optional gespeichert leer geheim sicher unbekannt gleich
est pas requis requise obligatoire facultatif facultative stocké stockée vide dans sur pour avec une les
es requerido requerida obligatorio obligatoria opcional almacenado almacenada vacío vacía para con una los las
""".replace("|", "").split())
_WORD_SUFFIX = re.compile(r"(?i)(?:ed|ing|able|ible|tion|sion|ment|ness|ity|ive|ous|ful|less|ize|ized|ised|"
                          r"ally|ely|ily|tly|rly|ssly|ully|"
                          r"ung|keit|heit|lich|ement|ique|ción|dad)$")
_CLAUSE_NEXT = re.compile(r"(?i)\s*(?:$|[.,;:!?)\]}»”’\"'`—–#/]|-\s|\(|(?:and|but|or|for|to|when|if|on|in|at|until|"
                          r"then|before|after|so|und|oder|für|et|ou|pour|y|o|para|e|en|wenn|quand|cuando)\b)")


def _word_value_ok(v: str, *, cue: str, text: str, end: int, clause: bool = True) -> bool:
    """Whether a plain word written after a password cue is the password itself (issue 21 item 4):
    not a function word, not an adjective, participle or noun about passwords, not a type name,
    and (``clause``) the clause ends after it ("the password is swordfish." yes; "the password is
    stored in" no). A shell assignment (``KEY=value``) needs no clause end."""
    w = v.rstrip(".)]}>:!?")
    if "code" in cue.casefold() and re.fullmatch(r"\d{4,12}", w):
        return _CLAUSE_NEXT.match(text, end) is not None  # "the passcode is 4821"
    if len(w) < 4 or w.casefold() in _NOT_WORD_VALUES or _PLACEHOLDER.match(w):
        return False
    if _CODE_REF.match(w) or _is_path(w) or "://" in w or re.match(r"[A-Za-z_][\w.]*[\[(]", w):
        return False  # a code reference: os.environ['X'], config.get("x"), a path
    if _ENV_NAME.match(w) and not (cue.isupper() and "_" not in w):
        return False  # an env var's name (GITHUB_TOKEN), unless the whole line shouts ("PASSWORD IS BUTTERCUP")
    if w.isalpha() and len(w) >= 6 and _WORD_SUFFIX.search(w):
        return False  # "hashed", "rotating", "configurable", "rotation", "management"
    if heuristic.is_templated_secret(w) or heuristic.is_prefixed_with_dollar_sign(w) \
            or heuristic.is_sequential_string(w):
        return False
    return not clause or _CLAUSE_NEXT.match(text, end) is not None


def _phrase_value_ok(v: str) -> bool:
    """A quoted phrase after a cue ("'correct horse battery staple'"): up to eight words, not a
    placeholder ("<your password>", "your secret here") nor prose about the secret."""
    words = v.split()
    if not words or len(words) > 8 or len(v) < 4:
        return False
    if _PLACEHOLDER.match(v) or any(_PLACEHOLDER.match(x) for x in words if len(x) > 2 and x[0] in "<$%{[("):
        return False
    low = [x.casefold().strip(".,;:!?") for x in words]
    if len(words) == 1:
        return _plausible_value(v, True, prose=False) or (v.isalpha() and low[0] not in _NOT_WORD_VALUES
                                                          and not _WORD_SUFFIX.search(v) and len(v) >= 4)
    if {"your", "here", "placeholder", "example", "redacted", "changeme", "xxx", "same"} & set(low):
        return False
    return low[0] not in _NOT_WORD_VALUES or len(words) >= 3 and sum(x not in _NOT_WORD_VALUES for x in low) >= 2


def _cli_value_ok(v: str) -> bool:
    """A value in a credential position of a command line or connection string is a password unless
    it is a reference ($VAR, ${X}, <password>, %s, ***) or an env var's name."""
    v = v.rstrip(".)]}>,;")
    if len(v) < 3 or _PLACEHOLDER.match(v) or heuristic.is_templated_secret(v):
        return False
    if v.startswith(("$", "%", "{", "<", "[", "(", "`")) or _ENV_NAME.match(v):
        return False
    return v.casefold() not in {"stdin", "prompt", "password", "passwd", "pass", "secret", "env", "file", "none",
                                "null", "true", "false", "yes", "no", "flag", "option"}


def _indirect(text: str, m: re.Match) -> bool:
    """The value is read from somewhere (``os.environ['X']``, ``getenv("X")``, ``config.x``): detect-secrets' rule."""
    v = m.group("v") or ""
    return bool(heuristic.is_indirect_reference(text[m.start():m.end() + 40].splitlines()[0])
                or re.match(r"[A-Za-z_][\w.]*[\[(]", v))


def _quoted_hit(m: re.Match, out: list[tuple[int, int, str]]) -> bool:
    """Whether the cue's value is a quoted phrase (``qv``); a plausible one is added to ``out``."""
    if m.group("qv") is None:
        return False
    if _phrase_value_ok(m.group("qv")):
        out.append((m.start("qv"), m.end("qv"), _WORDS))
    return True


def _word_hits(text: str, out: list[tuple[int, int, str]]) -> None:
    """Passwords written as words, on command lines and in connection strings (issue 21 item 4)."""
    low = text.lower()
    for words, rx in (_CLI_RES if _CLI_GATE.search(low) else ()):
        if any(w in low for w in words):
            for m in rx.finditer(text):
                if _cli_value_ok(m.group("v")):
                    out.append((m.start("v"), m.start("v") + len(m.group("v").rstrip(".)]}>,;")), _CLI))
    if "=" in text and (_CONN_CONTEXT.search(text) or "?" in text or "&" in text):
        for i, rx in enumerate(_CONN_RES):
            if i == 0 and not _CONN_CONTEXT.search(text):
                continue
            for m in rx.finditer(text):
                if _cli_value_ok(m.group("v")):
                    out.append((m.start("v"), m.end("v"), _CONN))
    if any(w in low for w in _CRED_WORDS):
        for m in _PW_CRED.finditer(text):
            v, s = m.group("v"), m.start("v")
            w = v.rstrip(".)]}>:!?")
            if _cli_value_ok(w) and (_plausible_value(w, False, prose=True)
                                     or _word_value_ok(w, cue="", text=text, end=s + len(w))):
                out.append((s, s + len(w), _WORDS))
    if not _CUE_GATE.search(low):
        return
    for m in _PW_PROSE.finditer(text):
        if _indirect(text, m) or _quoted_hit(m, out):
            continue
        v, s = m.group("v"), m.start("v")
        w = v.rstrip(".)]}>:!?")
        if _plausible_value(v, False, prose=True) or _word_value_ok(v, cue=m.group("cue"), text=text, end=s + len(w)):
            out.append((s, s + len(w), _WORDS))
        elif re.search(r"(?i)phrase", m.group("cue")) and w.isalpha():
            # a passphrase of several words to the clause's end ("the wifi passphrase is purple elephant
            # dancing", "Passphrase: a cold wind from the north"): three words or more, the first no
            # participle; or, after "is", a first word that is no function word
            tail = re.match(r"[^.,;:!?()\n]{0,80}", text[s:]).group().rstrip()
            words = tail.split()
            if _WORD_SUFFIX.search(w) or w.casefold() in _NOT_VALUES - {"a", "an", "the"} and len(words) < 3:
                continue
            if len(words) >= 3 or (len(words) >= 2 and w.casefold() not in _NOT_WORD_VALUES):
                out.append((s, s + len(tail), _WORDS))
    for m in _PW_ASSIGN.finditer(text):
        if _indirect(text, m) or _quoted_hit(m, out):
            continue
        v, s = m.group("v"), m.start("v")
        w = v.rstrip(".)]}>:!?")
        if re.fullmatch(r"[a-z]+(?:[-_][a-z]+)+", w):
            continue  # lowercase words joined: "local-dev-secret", "proxy-pass" (a name, issue 9 tuning)
        shell = m.group("op") == "="
        if _word_value_ok(v, cue=m.group("key"), text=text, end=s + len(w), clause=not shell):
            out.append((s, s + len(w), _WORDS))
    for m in _PW_PHRASE.finditer(text):
        words = m.group("v").split()
        if len(words) >= 3 and words[0].casefold() not in _NOT_WORD_VALUES - {"a", "an", "the"} \
                and not _WORD_SUFFIX.search(words[0]) and not _PLACEHOLDER.match(words[0]):
            out.append((m.start("v"), m.start("v") + len(m.group("v").rstrip()), _WORDS))
    for m in _PW_QUOTED.finditer(text):
        if _phrase_value_ok(m.group("qv")):
            out.append((m.start("qv"), m.end("qv"), _WORDS))
    for m in _PW_PAIR.finditer(text):
        v, s = m.group("v"), m.start("v")
        w = v.rstrip(".)]}>:!?")
        if _plausible_value(v, False, prose=True) or _word_value_ok(v, cue="", text=text, end=s + len(w)):
            out.append((s, s + len(w), _WORDS))
    for m in _PW_SET.finditer(text):
        if m.group("qv") is not None:
            if _phrase_value_ok(m.group("qv")):
                out.append((m.start("qv"), m.end("qv"), _WORDS))
            continue
        v, s = m.group("v"), m.start("v")
        w = v.rstrip(".)]}>:!?")
        if _plausible_value(v, False, prose=True) or _word_value_ok(v, cue="", text=text, end=s + len(w)):
            out.append((s, s + len(w), _WORDS))
    for m in _PW_AS.finditer(text):
        if m.group("qv") is not None:
            if _phrase_value_ok(m.group("qv")):
                out.append((m.start("qv"), m.end("qv"), _WORDS))
        elif _plausible_value(m.group("v"), False, prose=True) or _word_value_ok(
                m.group("v"), cue="", text=text, end=m.end("v"), clause=False):
            out.append((m.start("v"), m.end("v"), _WORDS))


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
    _B64_TOKEN.pattern, _B64_LIMIT, _WORDY.pattern, _PW_PROSE.pattern, _PW_ASSIGN.pattern, _PW_QUOTED.pattern, _PW_PAIR.pattern, _PW_AS.pattern, _PW_SET.pattern,
    _PW_CRED.pattern, _ROLE, _PW_PHRASE.pattern,
    [(w, r.pattern) for w, r in _CLI_RES], _CUE_GATE.pattern, _CRED_WORDS, _CONN_CONTEXT.pattern, [r.pattern for r in _CONN_RES], sorted(_NOT_WORD_VALUES),
    _WORD_SUFFIX.pattern, _CLAUSE_NEXT.pattern,
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


# a cheap gate: text with none of these cannot hold a hit of the keyword/prose/regex kinds. The token
# formats without a cue word are named by what they must hold: Twilio's ``SK`` and 32 characters,
# Artifactory's ``AP``, a hex digit and 8 or more (a bare ``sk``/``ap`` let "task", "api", "apply" through to
# every detector); ``private`` is not a branch: a private-key header and ``private_key`` both hold ``key``.
_GATE = re.compile(r"(?i)pass|pw|secr|kennwort|wachtwoord|contrase|clave|senha|geheim|identified|mysql|mariadb|"
                   r"sqlcmd|bcp|osql|isql|zugangsdaten|anmeldedaten|identifiants|credenciales|redis-cli|\s-u|--user|\s-a\s|--auth|key|token|credential|login|bearer|basic|://|AKIA|ASIA|gh[pousr]_|"
                   r"glpat|xox|sk_|rk_|pk_|eyJ|npm_|pypi-|SG\.|SK[0-9a-z]{32}|AIza|AKC|AP[0-9a-f][0-9a-z]{8}|\d{8,10}:|"
                   r"[A-Za-z0-9+/_-]{24}")


# the same gate for ASCII text, lowercased first: case-sensitive on the lowercased text, each branch
# matches exactly where the case-insensitive one matches in the original (ASCII letters fold one to one),
# about three times faster (issue 11, item 9: every imported statement passes through here)
_GATE_ASCII_LOWER = re.compile(r"pass|pw|secr|kennwort|wachtwoord|contrase|clave|senha|geheim|identified|mysql|"
                               r"mariadb|sqlcmd|bcp|osql|isql|zugangsdaten|anmeldedaten|identifiants|credenciales|redis-cli|\s-u|--user|\s-a\s|--auth|key|token|credential|login|bearer|basic|://|akia|asia|"
                               r"gh[pousr]_|glpat|xox|sk_|rk_|pk_|eyj|npm_|pypi-|sg\.|sk[0-9a-z]{32}|aiza|akc|"
                               r"ap[0-9a-f][0-9a-z]{8}|\d{8,10}:")
_GATE_ASCII_RUN = re.compile(r"[a-z0-9+/_-]{24}")
#: :data:`_GATE_ASCII_LOWER` taken apart: its literal branches (each a substring test, a fast C search) and
#: the rest as patterns, each behind a substring it needs. An alternation of forty words costs the regex
#: engine every branch at every position; this is the same test (:func:`_cue_in_lower`) at a fraction.
_GATE_LITERALS = tuple(b for b in _GATE_ASCII_LOWER.pattern.replace(r"\.", ".").split("|") if re.fullmatch(r"[a-z:/._-]+", b))
#: the branches that are patterns, not words (``tests/test_secrets_gate.py`` checks the two lists cover the gate)
_GATE_PATTERNED = (r"\s-u", r"\s-a\s", r"gh[pousr]_", r"sk[0-9a-z]{32}", r"ap[0-9a-f][0-9a-z]{8}", r"\d{8,10}:")
_GATE_DASH = re.compile(r"\s-u|\s-a\s")
_GATE_SHAPES = re.compile(r"sk[0-9a-z]{32}|ap[0-9a-f][0-9a-z]{8}")
_GATE_GH = re.compile(r"gh[pousr]_")
_GATE_TELEGRAM = re.compile(r"\d{8,10}:")


def _cue_in_lower(low: str) -> bool:
    """``_GATE_ASCII_LOWER.search(low) is not None``, faster: ``low`` is lowercased ASCII text."""
    for word in _GATE_LITERALS:
        if word in low:
            return True
    return bool((("-u" in low or "-a" in low) and _GATE_DASH.search(low))
                or (("sk" in low or "ap" in low) and _GATE_SHAPES.search(low))
                or ("gh" in low and "_" in low and _GATE_GH.search(low))
                or (":" in low and _GATE_TELEGRAM.search(low)))


def _gated(text: str) -> bool:
    """Whether ``text`` passes :data:`_GATE` (may hold a secret and must be scanned)."""
    if not text.isascii():
        return _GATE.search(text) is not None
    low = text.lower()
    return _cue_in_lower(low) or _GATE_ASCII_RUN.search(low) is not None


_GATE_CUES = re.compile(_GATE.pattern.rsplit("|", 1)[0])  # the gate's words, without its 24-run branch
_ANY_RUN = re.compile(r"(?i)[a-z0-9+/_-]{24}")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_+=-]{20}")


def _gate_kind(text: str) -> int:
    """Which detectors ``text`` needs (issue 21: paths and ids of every field are scanned, so the ones
    without a cue word are kept cheap): 3 all (a cue word of :data:`_GATE`); 2 the token patterns and
    entropy (a run of 20 token characters: every detect-secrets pattern without a cue word in the gate
    needs one); 1 entropy only (a 24-character run with ``/``, e.g. a long path); 0 none.
    Non-zero exactly where :func:`_gated` is true."""
    if text.isascii():
        low = text.lower()
        if _cue_in_lower(low):
            return 3
        if _GATE_ASCII_RUN.search(low) is None:
            return 0
    else:
        if _GATE_CUES.search(text) is not None:
            return 3
        if _ANY_RUN.search(text) is None:
            return 0
    return 2 if _TOKEN_RUN.search(text) is not None else 1


@lru_cache(maxsize=4096)
def _scan(text: str) -> tuple[SecretHit, ...]:
    kind = _gate_kind(text) if text else 0
    return _detect(text, kind) if kind else ()


def _detect(text: str, kind: int = 3) -> tuple[SecretHit, ...]:
    """The hits of the detectors gate kind ``kind`` asks for (3: all of them, ungated)."""
    spans: list[tuple[int, int, str]] = []
    if kind >= 2:
        _regex_hits(text, spans)
    if kind == 3:
        _keyword_hits(text, spans)
        _word_hits(text, spans)
    _entropy_hits(text, spans)
    if not spans:
        return ()
    # merge overlaps: the earliest, then the longest span wins; a named type beats a generic one
    generic = (_ENTROPY, _PROSE, _KEYWORD, _WORDS, _CLI, _CONN)
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


def scan_cached(text: str) -> tuple[SecretHit, ...]:
    """:func:`find_secrets` as the cached tuple itself (no copy), for callers that only ask whether a
    text holds a secret."""
    return _scan(text) if text else ()


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

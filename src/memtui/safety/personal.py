"""Redaction of personal data agents copy into memory (issue 9, item 1).

Three kinds, each replaced on import unless the user keeps them (``memtui import
--keep-personal-data``):

* ``home path``: an absolute home-directory path with a user name — ``/home/alice/src/x`` ->
  ``~/src/x``, ``/Users/alice`` -> ``~``, ``C:\\Users\\alice\\repo`` -> ``~\\repo``;
* ``e-mail``: ``alice@example.com`` -> ``<redacted: e-mail>``;
* ``phone``: international or grouped numbers (``+1 415 555 0100``, ``(415) 555-0100``) ->
  ``<redacted: phone>``. Bare digit runs (ids, SHAs, ports, versions, dates) are not phones.

Public API: :func:`redact_personal` (text -> (redacted text, kinds found)). Pure.
"""

from __future__ import annotations

import re

__all__ = ["redact_personal", "PERSONAL_KINDS"]

PERSONAL_KINDS = ("home path", "e-mail", "phone")

_SYSTEM_USERS = frozenset({"root", "runner", "user", "username", "you", "your-name", "yourname", "me", "shared",
                           "public", "default", "default user", "all users", "<user>", "$user", "${user}",
                           "<username>", "%username%", "$(whoami)", "node", "ubuntu", "vscode", "codespace"})
_HOME_POSIX = re.compile(r"(?<![\w.~-])/(?:home|Users)/(?P<user>[A-Za-z0-9._$<>{}%()-]+)(?P<rest>(?:/[^\s'\"`<>|]*)?)")
_HOME_WIN = re.compile(r"(?i)(?<![\w])[A-Z]:\\+Users\\+(?P<user>[^\\\s'\"`<>|]+)(?P<rest>(?:\\+[^\s'\"`<>|]*)?)")
_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?![\w-])")
_NOREPLY = re.compile(r"(?i)^(?:noreply|no-reply|git|example|user|you|your\.?name|name|email)@|@(?:example\.(?:com|org|net)"
                      r"|users\.noreply\.github\.com|localhost)$")
_PHONE = re.compile(r"(?<![\w+./:#-])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}"
                    r"|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}|\d{3}[.-]\d{3}[.-]\d{4})(?![\w./:-])")


#: Every :data:`_PHONE` match holds one of these (its three forms: ``+`` and a digit; ``(ddd)``;
#: ``ddd-ddd``), and this pattern starts at ``+``, ``(`` or a digit only, so a text without a phone
#: number is passed over quickly (a search of :data:`_PHONE` itself tries every position).
_PHONE_HINT = re.compile(r"\+\d|\(\d{3}\)|\d{3}[ .-]?\d{3}")


def _home(m: re.Match, sep: str) -> str | None:
    if m.group("user").casefold() in _SYSTEM_USERS or m.group("user").startswith(("$", "<", "{", "%")):
        return None
    rest = m.group("rest") or ""
    return "~" + rest.replace("\\\\", "\\")


def redact_personal(text: str) -> tuple[str, list[str]]:
    """``text`` with home paths shortened to ``~`` and e-mails and phone numbers replaced; and the
    kinds found, one entry per redaction, in :data:`PERSONAL_KINDS` terms."""
    if not text:
        return text, []
    if ("/home/" not in text and "/Users/" not in text and "\\" not in text and "@" not in text
            and _PHONE_HINT.search(text) is None):
        return text, []  # nothing any of the three patterns below can match
    kinds: list[str] = []

    def home(m: re.Match) -> str:
        out = _home(m, "/")
        if out is None:
            return m.group(0)
        kinds.append("home path")
        return out

    def email(m: re.Match) -> str:
        if _NOREPLY.search(m.group(0)):
            return m.group(0)
        kinds.append("e-mail")
        return "<redacted: e-mail>"

    def phone(m: re.Match) -> str:
        if sum(c.isdigit() for c in m.group(0)) < 9:
            return m.group(0)
        kinds.append("phone")
        return "<redacted: phone>"

    if "/home/" in text or "/Users/" in text:
        text = _HOME_POSIX.sub(home, text)
    if "\\" in text:
        text = _HOME_WIN.sub(home, text)
    if "@" in text:
        text = _EMAIL.sub(email, text)
    if _PHONE_HINT.search(text):
        text = _PHONE.sub(phone, text)
    return text, kinds

"""Path globs as memory files write them (``pkg/**/*.snap``, ``*.test``, ``src/{api,web}/``): pure.

One home for glob matching, used by the importer (to root a glob a line names) and by revalidation
(to check it still matches). ``*`` and ``?`` stay inside a folder, ``**`` crosses folders (``**/``
also matches no folder), ``[...]`` is a character class (``[!x]`` negated), ``{a,b}`` alternatives,
a ``{name}`` placeholder (no comma: ``proto/{service}.proto``, ``db/migration/{vendor}``) stands for
one or more characters inside a folder, and a pattern ending in ``/`` or in a placeholder segment
matches everything under that folder.
"""

from __future__ import annotations

import re

__all__ = ["glob_regex", "glob_match"]

_PLACEHOLDER = re.compile(r"[A-Za-z_][\w-]*")
_LAST_PLACEHOLDER = re.compile(r"(?:^|/)\{[A-Za-z_][\w-]*\}\Z")


def glob_regex(pattern: str) -> re.Pattern:
    """A regular expression matching whole repository-relative paths against ``pattern``."""
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
            continue
        if pattern.startswith("**", i):
            out, i = out + ".*", i + 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[" and "]" in pattern[i + 1:]:
            j = pattern.index("]", i + 1)
            body = pattern[i + 1:j]
            out += "[" + ("^" + re.escape(body[1:]) if body.startswith("!") else re.escape(body)) + "]"
            i = j
        elif c == "{" and "}" in pattern[i:]:
            j = pattern.index("}", i)
            body = pattern[i + 1:j]
            if "," not in body and _PLACEHOLDER.fullmatch(body):
                out += "[^/]+"
            else:
                out += "(?:" + "|".join(re.escape(a) for a in body.split(",")) + ")"
            i = j
        else:
            out += re.escape(c)
        i += 1
    if pattern.endswith("/"):
        out += ".*"
    elif _LAST_PLACEHOLDER.search(pattern):
        out += "(?:/.*)?"
    return re.compile(out + r"\Z")


def glob_match(pattern: str, files) -> list[str]:
    """The ``files`` (an iterable of paths) that ``pattern`` matches, sorted; a pattern without
    ``/`` (``*.test``) matches file names in any folder."""
    p = pattern.strip().removeprefix("./")
    rx = glob_regex(p)
    if "/" not in p.rstrip("/"):
        rx = re.compile(r"(?:.*/)?" + rx.pattern)
    return sorted(f for f in files if rx.match(f))

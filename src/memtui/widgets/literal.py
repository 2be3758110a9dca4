"""Show untrusted text (statements, paths, excerpts) literally: never as markup, never as escapes.

Rich markup such as ``[bold]`` or ``[/]`` stays text because content is built as
:class:`rich.text.Text`, which is never parsed for markup. Control characters (ANSI escapes
start with ESC) are replaced by visible ``\\xNN`` codes so they can neither style the terminal
nor move the cursor.
"""

from __future__ import annotations

import re

from rich.text import Text

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str | None) -> str:
    """``text`` with every control character except newline and tab shown as ``\\xNN`` (None -> "")."""
    if not text:
        return ""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def literal(text: str | None, style: str = "") -> Text:
    """A Rich Text holding ``text`` exactly as written (see :func:`visible`), in ``style``."""
    return Text(visible(text), style=style, no_wrap=False)


def one_line(text: str | None, limit: int = 200) -> Text:
    """The first line of ``text``, shortened to ``limit`` characters, as literal Text (for table cells)."""
    s = visible(text).replace("\n", " ⏎ ").replace("\t", " ")
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return Text(s, no_wrap=True, overflow="ellipsis")

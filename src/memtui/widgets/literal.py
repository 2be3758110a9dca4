"""Show untrusted text (statements, paths, excerpts) literally: never as markup, never as escapes.

Rich markup such as ``[bold]`` or ``[/]`` stays text because content is built as
:class:`rich.text.Text`, which is never parsed for markup. Control characters (ANSI escapes
start with ESC) are replaced by visible ``\\xNN`` codes so they can neither style the terminal
nor move the cursor.
"""

from __future__ import annotations

from rich.text import Text

from memtui.text import visible

__all__ = ["literal", "one_line", "visible"]


def literal(text: str | None, style: str = "") -> Text:
    """A Rich Text holding ``text`` exactly as written (see :func:`visible`), in ``style``."""
    return Text(visible(text), style=style, no_wrap=False)


def one_line(text: str | None, limit: int = 200) -> Text:
    """The first line of ``text``, shortened to ``limit`` characters, as literal Text (for table cells)."""
    s = visible(text).replace("\n", " ⏎ ").replace("\t", " ")
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return Text(s, no_wrap=True, overflow="ellipsis")

"""Untrusted text made safe to print: control characters (ANSI escapes, carriage returns, bells)
become visible ``\\xNN`` codes, so a statement can neither style nor move the terminal.

Used by the CLI and, through :mod:`memtui.widgets.literal`, by the TUI.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_OR_NEWLINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def visible(text: str | None) -> str:
    """``text`` with every control character except newline and tab shown as ``\\xNN`` (None -> "")."""
    if not text:
        return ""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def visible_line(text: str | None) -> str:
    """Like :func:`visible`, and newlines and tabs too (for one-line output such as ids and table cells)."""
    if not text:
        return ""
    return _CONTROL_OR_NEWLINE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)

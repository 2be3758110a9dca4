"""Untrusted text made safe to print, and the rule for names that may hold no control character.

:func:`visible` is the one function every output path uses (CLI ``_echo``, the TUI through
:mod:`memtui.widgets.literal`, ``export agents-md``, recall, the maintenance reports): whole
terminal escape sequences (ECMA-48 CSI ``ESC [ ... m``, OSC ``ESC ] ... BEL`` such as hyperlinks,
DCS/SOS/PM/APC strings, two-byte escapes, and their 8-bit C1 forms) are removed entirely, so no
remnant such as ``[31m`` is left; every other control character (a lone ESC, CR, BEL, NUL, C1) is
shown as a visible ``\\xNN`` code. Invisible formatting characters (Unicode category Cf: the
bidirectional controls U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C, zero-width spaces,
U+FEFF, the tag characters U+E0001 and U+E0020-U+E007F; the whole set is ``_FORMAT``) and the line/paragraph separators are shown as ``\\uXXXX`` codes (issue
21 item 8), except a zero-width (non-)joiner between two non-ASCII characters (emoji sequences,
Persian, Indic scripts), where it only joins. A statement can thus neither style nor move the
terminal, nor reorder what a reader sees ("Trojan Source").
Rich markup (``[bold]x[/]``) is not a control sequence and is left as text (the TUI shows it
literally because it builds :class:`rich.text.Text`, never markup).

:func:`control_problem` is the rule for actor names, memory ids and tags (issue 9, item 5): no
control character at all, newlines and tabs included.
"""

from __future__ import annotations

import json
import re

#: Whole escape sequences: CSI, OSC and string sequences (terminated by BEL or ST), then two-byte escapes.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"                          # CSI: ESC [ params intermediates final
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"  # OSC/DCS/SOS/PM/APC ... ST
    r"|\x1b[ -/]*[0-~]"                                          # nF/Fp/Fe/Fs escapes: ESC c, ESC ( B, ESC 7
)
#: Unicode category Cf (format characters, Unicode 14) but the two joiners, and U+2028/U+2029.
_FORMAT = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f"
           "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
           "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
           "\u2028\u2029")
#: A zero-width (non-)joiner not standing between two non-ASCII characters (where it would only hide).
_LONE_JOINER = r"(?<![^\x00-\x7f])[\u200c\u200d]|[\u200c\u200d](?![^\x00-\x7f])"
_JOINER = re.compile(_LONE_JOINER)
_CONTROL = re.compile(rf"[\x00-\x08\x0b-\x1f\x7f-\x9f{_FORMAT}]")
_CONTROL_OR_NEWLINE = re.compile(rf"[\x00-\x1f\x7f-\x9f{_FORMAT}]")
#: The same for ASCII text (most of it), where only C0 controls and DEL can occur: a cheaper pattern.
_ASCII_PATTERN = {_CONTROL: re.compile(r"[\x00-\x08\x0b-\x1f\x7f]"),
                  _CONTROL_OR_NEWLINE: re.compile(r"[\x00-\x1f\x7f]")}


def _escape(ch: str) -> str:
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def _code(m: re.Match) -> str:
    return _escape(m.group())


def _shown(text: str, controls: re.Pattern) -> str:
    if text.isascii():
        return _ASCII_PATTERN[controls].sub(_code, _SEQUENCE.sub("", text))
    out = controls.sub(_code, _SEQUENCE.sub("", text))
    if "\u200c" in out or "\u200d" in out:  # rare: the joiner rule needs its neighbours (a slower pattern)
        out = _JOINER.sub(_code, out)
    return out


def without_escapes(text: str | None) -> str:
    """``text`` without its terminal escape sequences (the other characters kept): what statement analysis
    reads, so ``"\x1b[31mRuleStore\x1b[0m"`` names ``RuleStore``, not ``31mRuleStore``."""
    return _SEQUENCE.sub("", text) if text else ""


def visible(text: str | None) -> str:
    """``text`` without terminal escape sequences and with every other control character except
    newline and tab shown as ``\\xNN``, and invisible formatting characters (bidi controls,
    zero-width characters) as ``\\uXXXX`` (None -> "")."""
    if not text:
        return ""
    return _shown(text, _CONTROL)


def visible_line(text: str | None) -> str:
    """Like :func:`visible`, and newlines and tabs shown too (one-line output such as ids and table cells)."""
    if not text:
        return ""
    return _shown(text, _CONTROL_OR_NEWLINE)


def control_problem(what: str, value: str | None) -> str | None:
    """None when ``value`` holds no control character (C0 incl. newline and tab, DEL, C1) and no
    invisible formatting character (bidi controls, zero-width space ...; issue 21 item 8); else a
    sentence naming ``what`` and the first one, e.g. ``"--actor holds a control character (\\x1b at
    position 4)"``. The rule for actor names, memory ids and tags (issue 9, item 5)."""
    m = _CONTROL_OR_NEWLINE.search(value or "") or _JOINER.search(value or "")
    if m is None:
        return None
    return f"{what} holds a control character ({_code(m)} at position {m.start() + 1})"


def visible_data(value):
    """``value`` (JSON-like: dicts, lists, strings, numbers) with every string, keys too, made
    :func:`visible` (the maintenance reports, the HTTP API's answers)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible_data(k): visible_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [visible_data(v) for v in value]
    return value


_JSON_RAW = re.compile(rf"[\x7f-\x9f{_FORMAT}]|{_LONE_JOINER}")


def _json_escape(m: re.Match) -> str:
    n = ord(m.group())
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000  # a UTF-16 surrogate pair, as JSON writes characters beyond the BMP
    return f"\\u{0xd800 + (n >> 10):04x}\\u{0xdc00 + (n & 0x3ff):04x}"


def json_text(data, **kwargs) -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False)`` with DEL, C1 controls, line/paragraph
    separators and the invisible formatting characters of ``_FORMAT`` (bidi controls, zero-width characters) written as ``\\uXXXX`` escapes
    too (json leaves them raw), so the output holds no control character and stays valid JSON after
    :func:`visible` (issue 9 item 5, issue 21 item 8)."""
    kwargs.setdefault("indent", 2)
    text = json.dumps(data, ensure_ascii=False, **kwargs)
    return _JSON_RAW.sub(_json_escape, text)

"""Line breaking that keeps tokens whole: paths break after ``/``, code after punctuation (issue 11, item 5).

Rich wraps only at whitespace and folds a longer word wherever the width ends, so
``src/main/java/com/acme/validation/RuleRegistry.java`` is cut mid-name. :class:`Wrapped`
breaks after whitespace or any of its ``breaks`` characters, folds only a token that is wider
than the whole line, and indents continuation lines.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text


#: where a path may break: after these (``src/``, ``File.java:``), and before ``@`` (``@43d3d11``)
PATH_BREAKS = "/:"
BREAK_BEFORE = "@"
#: where a line of code may break (after these, or after whitespace)
CODE_BREAKS = "/.,;:()[]{}<>=+-*&|!?"


def wrap_at(text: Text, width: int, breaks: str = PATH_BREAKS, indent: int = 0) -> list[Text]:
    """``text`` cut into lines of at most ``width`` cells, each line ending after whitespace or a
    character of ``breaks``, or before ``@``; continuation lines start with ``indent`` spaces, or as
    many as the line itself starts with if more. A token wider than a
    whole line is folded (the only mid-token break). Newlines in ``text`` are kept."""
    width = max(1, width)
    indent = indent if indent < width // 2 else 0
    out: list[Text] = []
    for line in text.split("\n", allow_blank=True):
        plain, start, first = line.plain, 0, True
        hang = max(indent, min(len(plain) - len(plain.lstrip(" ")), width // 2))  # under its own text
        hang = max(0, min(hang, width - longest_token(plain, breaks)))  # a name that fits a line is never cut
        while True:
            room = width if first else width - hang
            rest = plain[start:]
            if cell_len(rest) <= room:
                break
            end, cells = start, 0
            while end < len(plain) and cells + cell_len(plain[end]) <= room:
                cells += cell_len(plain[end])
                end += 1
            cut = next((i for i in range(end, start, -1)
                        if plain[i - 1].isspace() or plain[i - 1] in breaks
                        or (i < len(plain) and plain[i] in BREAK_BEFORE)), end)
            if cut == start:  # not even one character fits
                cut = start + 1
            piece = line[start:cut]
            piece.rstrip()
            out.append(piece if first else Text(" " * hang) + piece)
            start, first = cut, False
            while start < len(plain) and plain[start] == " ":
                start += 1
        tail = line[start:]
        out.append(tail if first else Text(" " * hang) + tail)
    for piece in out:
        piece.no_wrap, piece.end = True, "\n"
    return out


def longest_token(plain: str, breaks: str = PATH_BREAKS) -> int:
    """The cells of the widest piece of ``plain`` that :func:`wrap_at` may not break inside."""
    longest = run = 0
    for i, ch in enumerate(plain):
        if ch in BREAK_BEFORE:
            run = 0
        run += cell_len(ch)
        longest = max(longest, run)
        if ch.isspace() or ch in breaks:
            run = 0
    return longest


class Wrapped:
    """A Rich renderable: ``text`` wrapped by :func:`wrap_at` to the width it is given."""

    def __init__(self, text: Text, breaks: str = PATH_BREAKS, indent: int | None = None) -> None:
        self.text = text
        self.breaks = breaks
        plain = text.plain
        lead = len(plain) - len(plain.lstrip(" "))
        self.indent = indent if indent is not None else lead + (2 if plain[lead:lead + 2] == "• " else 0)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from wrap_at(self.text, options.max_width, self.breaks, self.indent)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((cell_len(line) for line in self.text.plain.split("\n")), default=0)
        return Measurement(min(widest, 8), widest)

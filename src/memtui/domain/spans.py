"""Line spans through a diff: pure functions, no I/O.

Line numbers are 1-based and spans inclusive (``[start, end]``), as in evidence records
(docs/record-format.md). Hunks follow git's zero-context (``-U0``) unified-diff header
``@@ -a,b +c,d @@``:

* ``b > 0``: old lines ``a .. a+b-1`` were removed (and ``d`` new lines put in their place);
* ``b == 0``: a pure insertion of ``d`` lines *after* old line ``a`` (``a == 0``: at the top);
* ``d == 0``: a pure deletion; ``c`` is then the new line after which the lines were.

A count omitted in the header (``@@ -7 +7 @@``) is 1.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

__all__ = ["Hunk", "SpanMap", "parse_hunk_header", "map_span", "find_block", "span_hash", "diff_hunks",
           "split_lines"]


@dataclass(frozen=True, order=True)
class Hunk:
    """One zero-context hunk ``@@ -old_start,old_count +new_start,new_count @@`` (git semantics)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int

    def __post_init__(self) -> None:
        if min(self.old_start, self.old_count, self.new_start, self.new_count) < 0:
            raise ValueError(f"negative hunk field: {self}")

    @property
    def header(self) -> str:
        """The hunk as git prints it, e.g. ``@@ -43 +44,5 @@``."""
        def part(start: int, count: int) -> str:
            return f"{start}" if count == 1 else f"{start},{count}"
        return f"@@ -{part(self.old_start, self.old_count)} +{part(self.new_start, self.new_count)} @@"


_HUNK_RE = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_hunk_header(line: str | bytes) -> Hunk:
    """Parse a unified-diff hunk header (``@@ -a[,b] +c[,d] @@ ...``) into a :class:`Hunk`.

    Raises ``ValueError`` when ``line`` is not a hunk header.
    """
    raw = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else line
    m = _HUNK_RE.match(raw)
    if not m:
        raise ValueError(f"not a hunk header: {line!r}")
    a, b, c, d = m.groups()
    return Hunk(int(a), 1 if b is None else int(b), int(c), 1 if d is None else int(d))


@dataclass(frozen=True)
class SpanMap:
    """Where an old span ``[start, end]`` is after the diff.

    ``status``: ``"unchanged"`` (same lines), ``"shifted"`` (same text, other line numbers:
    lines were inserted or deleted above it) or ``"touched"`` (a hunk changes, removes or
    inserts lines inside the span). ``start``/``end`` are the new 1-based inclusive lines, or
    ``None`` when touched. ``hunks`` are the hunks that touch the span (empty unless touched).
    ``region``: when touched, the new lines (1-based, inclusive) that replace the old span
    together with the touching hunks' old lines, or ``None`` when nothing replaces them (for
    showing "the same place at HEAD"); otherwise equal to ``(start, end)``.
    """

    status: str
    start: int | None
    end: int | None
    hunks: tuple[Hunk, ...] = ()
    region: tuple[int, int] | None = None

    @property
    def touched(self) -> bool:
        return self.status == "touched"


def map_span(start: int, end: int, hunks: Iterable[Hunk]) -> SpanMap:
    """Map the old span ``[start, end]`` (1-based, inclusive) through zero-context ``hunks``.

    ``hunks`` are the hunks of one file pair (any order; they must not overlap, as git's do
    not). A hunk touches the span when it removes or replaces one of its lines, or inserts
    lines strictly between two of its lines. Insertions directly above the first line or
    directly below the last line, and any change wholly above or below it, do not touch it;
    changes above shift it by ``new_count - old_count``.

    Raises ``ValueError`` when ``start < 1`` or ``end < start``.
    """
    if start < 1 or end < start:
        raise ValueError(f"invalid span [{start}, {end}]")
    delta = 0
    touching: list[Hunk] = []
    for h in sorted(hunks):
        if h.old_count > 0:
            h_first, h_last = h.old_start, h.old_start + h.old_count - 1
            if h_last < start:
                delta += h.new_count - h.old_count
            elif h_first > end:
                continue
            else:
                touching.append(h)
        elif h.new_count > 0:  # pure insertion after old line h.old_start
            if h.old_start < start:
                delta += h.new_count
            elif h.old_start >= end:
                continue
            else:
                touching.append(h)
    if touching:
        first, last = touching[0], touching[-1]
        u_start = min(start, first.old_start) if first.old_count else start
        u_end = max(end, last.old_start + last.old_count - 1)
        new_start = u_start + delta
        new_end = u_end + delta + sum(h.new_count - h.old_count for h in touching)
        region = (new_start, new_end) if new_end >= new_start else None
        return SpanMap("touched", None, None, tuple(touching), region)
    new = (start + delta, end + delta)
    return SpanMap("unchanged" if delta == 0 else "shifted", new[0], new[1], (), new)


def _norm(line: str) -> str:
    return line[:-1] if line.endswith("\n") else line


def find_block(block_lines: Sequence[str], new_lines: Sequence[str]) -> tuple[int, int] | None:
    """Find the block ``block_lines`` as consecutive lines of ``new_lines``.

    Lines compare exactly, ignoring one trailing ``"\\n"`` on either side. Returns the 1-based
    inclusive ``(start, end)`` of the only occurrence, or ``None`` when the block does not occur,
    occurs more than once (ambiguous), is empty, or holds only blank lines.
    """
    block = [_norm(x) for x in block_lines]
    if not block or all(not x.strip() for x in block):
        return None
    k = len(block)
    first, first_nl = block[0], block[0] + "\n"
    found: tuple[int, int] | None = None
    for i in range(len(new_lines) - k + 1):
        line = new_lines[i]
        if (line == first_nl or line == first) and all(
                _norm(new_lines[i + j]) == block[j] for j in range(1, k)):
            if found is not None:
                return None
            found = (i + 1, i + k)
    return found


def split_lines(text: str) -> list[str]:
    """Split ``text`` into lines the way git counts them: on ``"\\n"`` only, keeping the ``"\\n"``.

    The last line has no ``"\\n"`` when the text does not end with one; ``""`` has no lines.
    """
    if not text:
        return []
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def span_hash(lines: Iterable[str | bytes]) -> str:
    """``"sha256:<64 hex>"`` of the exact bytes of ``lines``, each with its trailing ``"\\n"``.

    Each line may be given with or without its ``"\\n"`` (one is appended when missing).
    ``str`` lines are encoded as UTF-8 (``surrogateescape``, so text decoded that way hashes
    to the original bytes). This is the ``spanHash`` of docs/record-format.md.
    """
    h = hashlib.sha256()
    for line in lines:
        raw = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else line
        h.update(raw if raw.endswith(b"\n") else raw + b"\n")
    return "sha256:" + h.hexdigest()


def diff_hunks(old_lines: Sequence[str], new_lines: Sequence[str]) -> list[Hunk]:
    """Zero-context hunks turning ``old_lines`` into ``new_lines`` (git's header semantics).

    Like git, the common head and tail are trimmed first; the middle is aligned with difflib.
    git's diff algorithm may align an ambiguous change differently, but every hunk list this
    returns is a correct diff of the two texts.
    """
    import difflib

    a, b = list(old_lines), list(new_lines)
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    mid_a, mid_b = a[head:len(a) - tail], b[head:len(b) - tail]
    hunks: list[Hunk] = []
    if not mid_a and not mid_b:
        return hunks
    matcher = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
        n_old, n_new = i2 - i1, j2 - j1
        hunks.append(Hunk(i1 + 1 if n_old else i1, n_old, j1 + 1 if n_new else j1, n_new))
    return hunks

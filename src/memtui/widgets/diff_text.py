"""Word-level differences of a statement against another (the canonical), as literal Rich Text."""

from __future__ import annotations

import difflib

from rich.text import Text

from memtui.text import visible


def highlight_against(text: str, reference: str, style: str = "bold black on yellow") -> Text:
    """``text`` with the words that are not in ``reference`` (in order, by difflib) highlighted."""
    words, ref = visible(text).split(" "), visible(reference).split(" ")
    out = Text()
    matcher = difflib.SequenceMatcher(None, [w.lower().strip(".,;") for w in ref],
                                      [w.lower().strip(".,;") for w in words], autojunk=False)
    changed = set()
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changed.update(range(j1, j2))
    for i, w in enumerate(words):
        if i:
            out.append(" ")
        out.append(w, style=style if i in changed else "")
    return out

"""Command palette (``:`` or ``ctrl+p``): jump to a memory by typing part of its id or of its statement
(issue 11, item 4; issue 24: ``old_rule`` or ``LinkedHashMap`` both find it).

memtui's other palette commands (open a screen, export, maintenance, theme) are system commands,
:meth:`memtui.app.MemtuiApp.get_system_commands`; this provider adds one hit per memory whose id or
statement holds what was typed, looked up in the store (off the event loop, in a thread) by the one finder
the jump dialog uses too (:func:`memtui.review.statements.find_memories`).
"""

from __future__ import annotations

import asyncio
from functools import partial

from rich.text import Text
from textual.command import Hit, Hits, Provider
from textual.markup import escape

from memtui.review.views import shorten
from memtui.text import visible_line

#: the fewest characters typed before the store is asked
MIN_PREFIX = 3
LIMIT = 10


def hit_label(memory_id: str) -> Text:
    """``Jump to memory <id>`` (literal: ids are untrusted)."""
    label = Text("Jump to memory ")
    label.append(visible_line(memory_id), style="bold")
    return label


class MemoryJumpProvider(Provider):
    """``Jump to memory <id>`` (its statement below it) for up to :data:`LIMIT` memories whose id or statement
    holds the query (those the reviewer may see); an exact id scores highest."""

    async def search(self, query: str) -> Hits:
        part = query.strip()
        if len(part) < MIN_PREFIX:
            return
        app = self.app
        found = await asyncio.to_thread(app.services.find_memories, part, LIMIT)
        for memory_id, statement in found:
            label = hit_label(memory_id)
            yield Hit(1.0 if memory_id == part else 0.9, label, partial(app.action_memory, memory_id),
                      text=label.plain, help=escape(visible_line(shorten(statement, 100))))  # help is markup

"""Command palette (``:`` or ``ctrl+p``): jump to a memory by typing (part of) its id (issue 11, item 4).

memtui's other palette commands (open a screen, export, maintenance, theme) are system commands,
:meth:`memtui.app.MemtuiApp.get_system_commands`; this provider adds one hit per memory whose id
starts with what was typed, looked up in the store (off the event loop, in a thread).
"""

from __future__ import annotations

import asyncio
from functools import partial

from rich.text import Text
from textual.command import Hit, Hits, Provider

from memtui.text import visible

#: the fewest characters typed before the store is asked
MIN_PREFIX = 3
LIMIT = 10


class MemoryJumpProvider(Provider):
    """``Jump to memory <id>`` for up to :data:`LIMIT` ids starting with the query (those the reviewer may see)."""

    async def search(self, query: str) -> Hits:
        prefix = query.strip()
        if len(prefix) < MIN_PREFIX or " " in prefix:
            return
        app = self.app
        ids = await asyncio.to_thread(app.services.memory_ids, prefix, LIMIT)
        for memory_id in ids:
            shown = visible(memory_id)
            label = Text("Jump to memory ")
            label.append(shown, style="bold")
            yield Hit(1.0 if memory_id == prefix else 0.9, label, partial(app.action_memory, memory_id),
                      text=f"Jump to memory {shown}", help="its detail, evidence and history")

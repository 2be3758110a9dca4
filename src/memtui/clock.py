"""Time and identifiers: one place that reads the clock, so ``--now`` can fix it."""

from __future__ import annotations

import itertools
import os
import threading
import time
from datetime import UTC, datetime

_lock = threading.Lock()
_last_ns = 0
_counter = itertools.count()


def utcnow() -> datetime:
    """The current time as an aware UTC datetime (``MEMTUI_NOW`` ISO-8601 fixes it, for tests and reports)."""
    fixed = os.environ.get("MEMTUI_NOW")
    if fixed:
        return parse_time(fixed)
    return datetime.now(UTC)


def parse_time(text: str) -> datetime:
    """Parse ISO-8601 (``Z`` allowed; a date alone is midnight UTC) to an aware UTC datetime.

    Raises ValueError naming the text when it is not a time.
    """
    try:
        dt = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"not an ISO-8601 time: {text!r}") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def iso(dt: datetime | None) -> str | None:
    """Format an aware datetime as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC, seconds); None stays None."""
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_event_id(prefix: str = "evt") -> str:
    """A unique id that sorts in creation order within and across processes: ``evt_<ns:020d>_<pid%10000:04d><n:04d>``."""
    global _last_ns
    with _lock:
        ns = max(time.time_ns(), _last_ns + 1)
        _last_ns = ns
        n = next(_counter) % 10000
    return f"{prefix}_{ns:020d}_{os.getpid() % 10000:04d}{n:04d}"

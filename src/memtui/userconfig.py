"""Per-user settings kept outside the store: ``$XDG_CONFIG_HOME/memtui/`` (default ``~/.config/memtui/``).

The review queue's filter and sort are saved here, per store (``queue.json``: store URL -> filter).
A user preference is not governed data: keeping it out of the store keeps the store's tables to
what is audited and shared, lets a reviewer keep a view of a read-only or shared PostgreSQL store,
and puts it beside the user's keymap file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

QUEUE_FILE = "queue.json"
#: The user's settings file (YAML; its ``judge:`` section is read by :mod:`memtui.similarity.judge`).
CONFIG_FILE = "config.yaml"


def config_dir() -> Path:
    """The user's memtui settings folder (may not exist yet)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "memtui"


def config_file() -> Path:
    """The user's settings file, ``config_dir()/config.yaml`` (may not exist)."""
    return config_dir() / CONFIG_FILE


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read the saved queue view: {exc}") from exc
    return data if isinstance(data, dict) else {}


def load_queue_view(store: str) -> tuple[dict, str | None]:
    """The saved queue filter of ``store`` (a dict for ``QueueFilter.from_dict``; {} when none) and
    a warning naming the file when it could not be read (then {})."""
    try:
        return dict(_read(config_dir() / QUEUE_FILE).get("stores", {}).get(store) or {}), None
    except ValueError as exc:
        return {}, str(exc)


def save_queue_view(store: str, view: dict) -> None:
    """Save ``view`` as ``store``'s queue filter (other stores' entries kept; written atomically).
    Raises OSError when the folder cannot be written."""
    path = config_dir() / QUEUE_FILE
    try:
        data = _read(path)
    except ValueError:
        data = {}
    data.setdefault("stores", {})[store] = view
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)

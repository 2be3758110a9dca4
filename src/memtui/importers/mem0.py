"""Mem0 exports as candidates (issue 5, "Import" item 3).

Read: the ``get_all`` result ``{"results": [{id, memory, hash, metadata, created_at, updated_at,
user_id, agent_id, run_id, expiration_date?, categories?}, ...]}``, the older bare list of the same
items, and JSON Lines of items. Extra top-level keys (``relations`` of the graph store) are ignored.

Each item becomes a candidate: the ``memory`` text is the statement; ``created_at`` its creation
time; ``expiration_date`` its ``expires_at``; ``user_id``/``agent_id``/``run_id``, ``categories`` and
scalar ``metadata`` values become tags (``user:``, ``agent:``, ``run:``, ``category:``,
``meta:key=value``); the type comes from ``metadata.type``/``metadata.category``/the first category,
else from the text. Evidence: a ``ref`` ``mem0:<id>``. The Mem0 id anchors the record: the memory
id hashes it with the content, the logical memory id hashes the Mem0 id alone, so a Mem0 memory
whose text changed supersedes its previous candidate and keeps the logical id.

An item's ``history`` list (what ``Memory.history(id)`` returns: ``event`` ADD/UPDATE/DELETE,
``old_memory``, ``new_memory``, ``created_at``), when present, is kept as history notes after the
creation event (from = to = candidate), each with its Mem0 timestamp in the reason text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memtui.importers.records import (ImportContext, Item, Parsed, line_of, load_json_lines, parse_time,
                                      read_text, record_error, tag, type_for_label, type_for_text)
from memtui.importers.reader import ImportFileError, jsonl_lines

__all__ = ["parse_mem0"]

MAX_META_TAGS = 10


def _items(path: Path, text: str) -> list[tuple[int | None, Any, str | None]]:
    if not text.strip():
        return []
    if path.suffix.casefold() == ".jsonl":
        return jsonl_lines(text.encode("utf-8"))  # a broken line is one bad record
    doc = load_json_lines(path, text)
    if isinstance(doc, dict):
        if "results" in doc:
            values = doc["results"]
            if not isinstance(values, list):
                raise ImportFileError(path, "'results' must be a list of Mem0 memories", line_of(doc, "results"))
        elif isinstance(doc.get("memories"), list):
            values = doc["memories"]
        elif isinstance(doc.get("memory"), str):
            values = [doc]
        else:
            raise ImportFileError(path, "not a Mem0 export: expected {\"results\": [...]} or a list of memories",
                                  line_of(doc, default=1))
    elif isinstance(doc, list):
        values = doc
    else:
        raise ImportFileError(path, f"not a Mem0 export: a JSON {type(doc).__name__}", 1)
    return [(line_of(v), v, None) for v in values]


def _history_notes(history: list) -> tuple[list[str], str | None]:
    """(notes, error) for a Mem0 history list."""
    notes = []
    for k, h in enumerate(history):
        if not isinstance(h, dict):
            return [], f"history[{k}] must be an object"
        when = h.get("created_at") or h.get("updated_at") or "unknown time"
        try:
            stamp = parse_time(when).isoformat() if when != "unknown time" else when
        except ValueError:
            return [], f"history[{k}].created_at: not a time ({when!r})"
        event = str(h.get("event") or "change").upper()
        old, new = h.get("old_memory"), h.get("new_memory")
        if old and new and old != new:
            what = f"{old!r} -> {new!r}"
        else:
            what = repr(new or old or "")
        actor = f" by {h['actor_id']}" if h.get("actor_id") else ""
        notes.append(f"mem0 history {stamp}: {event} {what}{actor}")
    return notes, None


def parse_mem0(files: list[Path], ctx: ImportContext) -> Parsed:
    """Read Mem0 exports into candidates; see the module doc."""
    out = Parsed()
    for path in files:
        path = Path(path)
        text = read_text(path)
        source = ctx.rel(path) or path.resolve().as_posix()
        out.files[str(path)] = "mem0"
        key = ("mem0", source)
        out.sources[key] = True
        for index, (line, data, error) in enumerate(_items(path, text)):
            rid = str(data.get("id")) if isinstance(data, dict) and data.get("id") is not None else None

            def bad(fld: str | None, message: str) -> None:
                where = line_of(data, fld.split("[")[0].split(".")[0], line) if fld else line
                out.errors.append(record_error(str(path), index, where, rid, fld, message))
                out.sources[key] = False

            if error is not None:
                bad(None, error)
                continue
            if not isinstance(data, dict):
                bad(None, f"expected a Mem0 memory object, got {type(data).__name__}")
                continue
            memory = data.get("memory", data.get("text"))
            if not isinstance(memory, str) or not memory.strip():
                bad("memory", "a Mem0 memory needs a non-empty 'memory' text")
                continue
            mem_id = rid or (str(data["hash"]) if data.get("hash") else None)
            times: dict[str, Any] = {}
            for fld in ("created_at", "updated_at", "expiration_date"):
                try:
                    times[fld] = parse_time(data.get(fld))
                except ValueError as exc:
                    bad(fld, str(exc))
                    break
            if len(times) < 3:
                continue
            metadata = data.get("metadata")
            if metadata is not None and not isinstance(metadata, dict):
                bad("metadata", f"must be an object or null, got {type(metadata).__name__}")
                continue
            categories = data.get("categories") or []
            if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
                bad("categories", "must be a list of texts")
                continue
            history = data.get("history")
            notes: list[str] = []
            if history is not None:
                if not isinstance(history, list):
                    bad("history", "must be a list of history events")
                    continue
                notes, herr = _history_notes(history)
                if herr:
                    bad("history", herr)
                    continue
            if not history and times["updated_at"] and times["created_at"] \
                    and times["updated_at"] != times["created_at"]:
                notes.append(f"mem0: created {times['created_at'].isoformat()}, "
                             f"last updated {times['updated_at'].isoformat()}")
            statement = " ".join(memory.split())
            tags = [tag("mem0", mem_id)] if mem_id else []
            for fld, prefix in (("user_id", "user"), ("agent_id", "agent"), ("run_id", "run"), ("app_id", "app")):
                if data.get(fld):
                    tags.append(tag(prefix, data[fld]))
            tags += [tag("category", c) for c in categories]
            meta = metadata or {}
            for k in sorted(meta)[:MAX_META_TAGS]:
                v = meta[k]
                if isinstance(v, (str, int, float, bool)) and str(v).strip():
                    tags.append(tag("meta", f"{k}={v}"))
            label = meta.get("type") or meta.get("category") or (categories[0] if categories else None)
            mtype = (type_for_label(str(label)) if label else None) or type_for_text(statement)
            anchor = f"mem0\x1f{mem_id}" if mem_id else f"mem0-text\x1f{statement.casefold()}"
            out.items.append(Item(
                fmt="mem0", path=str(path), source=source, index=index, line=line, anchor=anchor,
                statement=statement, type=mtype, repository_id=ctx.repository_id, tenant_id=ctx.tenant_id,
                tags=tags, evidence=[{"type": "ref", "ref": f"mem0:{mem_id}" if mem_id else f"mem0:{source}"}],
                logical_key=f"mem0\x1f{mem_id}" if mem_id else None, created_at=times["created_at"],
                expires_at=times["expiration_date"], proposer_type="mem0",
                proposer_id=str(data.get("agent_id") or data.get("user_id") or data.get("run_id") or "") or None,
                notes=notes,
            ))
    return out

"""The MCP memory server's knowledge graph as candidates (issue 5, "Import" item 2).

The server (``@modelcontextprotocol/server-memory``) stores its graph as JSON Lines, one record a
line, often under a ``.json`` name::

    {"type": "entity", "name": "billing-service", "entityType": "service", "observations": ["..."]}
    {"type": "relation", "from": "billing-service", "to": "ledger", "relationType": "writes to"}

A ``read_graph`` dump (``{"entities": [...], "relations": [...]}``) or a JSON list of such records
is read too. Each observation becomes a candidate scoped by its entity (``applies_to`` = the
entity name, tags ``entity:<name>`` and ``entityType:<type>``; type from the entity type, else from
the text), with a ``ref`` evidence naming the graph file and entity. Each relation becomes a
``ref`` evidence on the candidates of both its entities (``symbol`` = from, ``target`` = to,
``ref`` = "from relationType to"): relations change evidence, not statements, so adding one
refreshes still-candidate memories instead of superseding them. An entity named on several
lines is merged (observations in order).

Malformed lines (broken JSON, a missing ``name``/``from``/``to``/``relationType``, observations
that are not strings, an unknown ``type``) are reported with their line number; with
``skip_invalid`` the rest of the file is imported, and the file is then not used to retire
memories of observations that seem to have disappeared. A relation naming an entity not in the
file is reported as a warning.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memtui.importers.records import (ImportContext, Item, Parsed, line_of, load_json_lines, norm_text,
                                      read_text, record_error, tag, type_for_label, type_for_text)
from memtui.importers.reader import ImportFileError, jsonl_lines

__all__ = ["parse_mcp"]

_PEOPLE = frozenset({"person", "people", "user", "human", "developer", "owner", "team member"})


def _records(path: Path, text: str) -> list[tuple[int | None, Any, str | None]]:
    """(line, data, syntax error) per record of a graph file."""
    stripped = text.strip()
    if not stripped:
        return []
    try:
        json.loads(text)
        whole = True
    except (json.JSONDecodeError, RecursionError):
        whole = False
    if whole:
        doc = load_json_lines(path, text)
        if isinstance(doc, dict) and ("entities" in doc or "relations" in doc):
            out: list[tuple[int | None, Any, str | None]] = []
            for key, kind in (("entities", "entity"), ("relations", "relation")):
                values = doc.get(key) or []
                if not isinstance(values, list):
                    raise ImportFileError(path, f"'{key}' must be a list", line_of(doc, key))
                for v in values:
                    if isinstance(v, dict):
                        v.setdefault("type", kind)
                    out.append((line_of(v, default=line_of(doc, key)), v, None))
            return out
        if isinstance(doc, list):
            return [(line_of(v), v, None) for v in doc]
        return [(line_of(doc, default=1), doc, None)]
    return jsonl_lines(text.encode("utf-8"))  # a broken line is one bad record


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def parse_mcp(files: list[Path], ctx: ImportContext) -> Parsed:
    """Read MCP memory-server graph files into candidates; see the module doc."""
    out = Parsed()
    for path in files:
        path = Path(path)
        text = read_text(path)
        source = ctx.rel(path) or path.resolve().as_posix()
        out.files[str(path)] = "mcp"
        key = ("mcp", source)
        out.sources[key] = True
        entities: dict[str, dict[str, Any]] = {}
        relations: list[tuple[int | None, str, str, str]] = []
        for index, (line, data, error) in enumerate(_records(path, text)):
            def bad(fld: str | None, message: str, rid: str | None = None) -> None:
                out.errors.append(record_error(str(path), index, line, rid, fld, message))
                out.sources[key] = False

            if error is not None:
                bad(None, error)
                continue
            if not isinstance(data, dict):
                bad(None, f"expected a JSON object (an entity or a relation), got {type(data).__name__}")
                continue
            kind = data.get("type")
            if kind is None:
                kind = "entity" if "name" in data else ("relation" if "from" in data or "to" in data else None)
            if kind == "entity":
                name = _text(data.get("name"))
                if name is None:
                    bad("name", "an entity needs a non-empty 'name'")
                    continue
                etype = data.get("entityType")
                if etype is not None and not isinstance(etype, str):
                    bad("entityType", f"must be text, got {type(etype).__name__}", name)
                    continue
                obs = data.get("observations", [])
                if obs is None:
                    obs = []
                if not isinstance(obs, list):
                    bad("observations", f"must be a list of texts, got {type(obs).__name__}", name)
                    continue
                wrong = [i for i, o in enumerate(obs) if not isinstance(o, str)]
                if wrong:
                    bad(f"observations[{wrong[0]}]", f"must be text, got {type(obs[wrong[0]]).__name__}", name)
                    continue
                entry = entities.setdefault(name, {"type": (etype or "").strip() or "entity", "line": line,
                                                   "obs": []})
                entry["obs"] += [(o, line) for o in obs]
            elif kind == "relation":
                parts = {k: _text(data.get(k)) for k in ("from", "to", "relationType")}
                missing = [k for k, v in parts.items() if v is None]
                if missing:
                    bad(missing[0], f"a relation needs a non-empty '{missing[0]}'")
                    continue
                relations.append((line, parts["from"], parts["to"], parts["relationType"]))
            else:
                bad("type", f"unknown record type {kind!r}; expected 'entity' or 'relation'")

        by_entity: dict[str, list[Item]] = {}
        first = len(out.items)
        for name, entry in entities.items():
            etype = entry["type"]
            occurrences: dict[str, int] = {}
            for position, (obs, line) in enumerate(entry["obs"], 1):
                statement = " ".join(obs.split())
                if not statement:
                    continue
                k = norm_text(statement)
                occurrences[k] = occurrences.get(k, 0) + 1
                anchor = f"{name}\x1f{k}" + (f"\x1f{occurrences[k]}" if occurrences[k] > 1 else "")
                mtype = ("user_preference" if etype.casefold() in _PEOPLE else type_for_label(etype)) \
                    or type_for_text(statement)
                it = Item(fmt="mcp", path=str(path), source=source, index=len(out.items) - first, line=line,
                          anchor=anchor, statement=statement, type=mtype, repository_id=ctx.repository_id,
                          tenant_id=ctx.tenant_id, applies_to=[name],
                          tags=[tag("entity", name), tag("entityType", etype), tag("observation", str(position))],
                          evidence=[{"type": "ref", "ref": f"mcp-memory:{source} entity {name}"}],
                          proposer_type="mcp-memory", proposer_id=name)
                out.items.append(it)
                by_entity.setdefault(name, []).append(it)
        for line, src, dst, rel in relations:
            if src not in entities or dst not in entities:
                unknown = src if src not in entities else dst
                out.warnings.append(f"{path}: line {line}: relation '{src} {rel} {dst}' names entity "
                                    f"{unknown!r}, which the file does not define")
            ev = {"type": "ref", "ref": f"{src} {rel} {dst}", "symbol": src, "target": dst}
            for name in dict.fromkeys((src, dst)):
                for it in by_entity.get(name, []):
                    if ev not in it.evidence:
                        it.evidence.append(dict(ev))
    return out

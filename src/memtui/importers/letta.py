"""Letta agent files as candidates (issue 5, "Import" item 4).

Read: ``.af`` agent files and Letta JSON, also a file whose whole content is a JSON-encoded string
of one (decoded again). Memory blocks (``label``, ``value``, ``limit``) are found in the current
schema (top-level ``blocks`` with the agents' ``block_ids``), the older one (``core_memory`` of the
agent), an agent state (``memory.blocks``) and a create request (``memory_blocks``), at the top
level or inside each of ``agents``.

A block becomes one candidate (the whole value), or one per line when its value is a bulleted
list (two or more bullet lines; "Label:" lines are skipped). Anchor: agent name and block label
(plus the normalised line); a whole-block candidate keeps a logical id per (agent, label), so an
edited block supersedes its previous candidate. Tags: ``agent:<name>``, ``block:<agent>/<label>``,
``description:...``, ``read_only``. Type: ``human`` -> ``user_preference``, ``persona`` ->
``agent_persona``, else from the label, else from the text. Evidence: a ``ref``
``letta:<agent>/<label>``.

A block whose value is longer than its ``limit`` (characters, as Letta counts) is flagged: every
candidate of it gets the tag ``over_limit`` (and ``limit:<n>``) and ``requires_human_review``, and
the import reports a warning. Blocks with an empty value are skipped; a block without a text
``label``, with a non-text ``value`` or a non-integer ``limit`` is an error naming its line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from memtui.importers.records import (ImportContext, Item, Parsed, line_of, load_json_lines, norm_text,
                                      parse_time, read_text, record_error, tag, type_for_label, type_for_text)
from memtui.importers.reader import ImportFileError

__all__ = ["parse_letta", "blocks_of"]

_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(.*)$")
_LABEL_TYPES = {"human": "user_preference", "persona": "agent_persona"}


def _agent_name(agent: Any, default: str) -> str:
    if isinstance(agent, dict):
        for key in ("name", "id"):
            if isinstance(agent.get(key), str) and agent[key].strip():
                return agent[key].strip()
    return default


def _embedded(holder: dict) -> list[Any]:
    """Blocks held directly by an agent-like mapping (old schema, agent state, create request)."""
    out: list[Any] = []
    for key in ("core_memory", "memory_blocks"):
        if isinstance(holder.get(key), list):
            out += holder[key]
    mem = holder.get("memory")
    if isinstance(mem, dict) and isinstance(mem.get("blocks"), list):
        out += mem["blocks"]
    return out


def blocks_of(doc: Any, default_agent: str) -> list[tuple[str, Any]]:
    """(agent name, block) for every memory block of a Letta document, in file order. A block shared by
    several agents is listed once, under their names joined with "+"."""
    if not isinstance(doc, dict):
        return []
    out: list[tuple[str, Any]] = []
    agents = doc.get("agents") if isinstance(doc.get("agents"), list) else []
    top_blocks = doc.get("blocks") if isinstance(doc.get("blocks"), list) else []
    owners: dict[str, list[str]] = {}
    for agent in agents:
        name = _agent_name(agent, default_agent)
        if isinstance(agent, dict):
            for bid in agent.get("block_ids") or []:
                owners.setdefault(str(bid), []).append(name)
            out += [(name, b) for b in _embedded(agent)]
    for b in top_blocks:
        bid = str(b.get("id")) if isinstance(b, dict) and b.get("id") is not None else None
        names = owners.get(bid or "", [])
        agent = "+".join(dict.fromkeys(names)) if names else (
            _agent_name(agents[0], default_agent) if len(agents) == 1 else _agent_name(doc, default_agent))
        out.append((agent, b))
    out += [(_agent_name(doc, default_agent), b) for b in _embedded(doc)]
    return out


def parse_letta(files: list[Path], ctx: ImportContext) -> Parsed:
    """Read Letta agent files into candidates; see the module doc."""
    out = Parsed()
    for path in files:
        path = Path(path)
        text = read_text(path)
        source = ctx.rel(path) or path.resolve().as_posix()
        out.files[str(path)] = "letta"
        key = ("letta", source)
        out.sources[key] = True
        doc = load_json_lines(path, text)
        if not isinstance(doc, dict):
            raise ImportFileError(path, f"not a Letta agent file: a JSON {type(doc).__name__}", 1)
        blocks = blocks_of(doc, path.stem)
        if not blocks:
            raise ImportFileError(path, "no Letta memory blocks found (expected agents/blocks, core_memory, "
                                  "memory.blocks or memory_blocks)", line_of(doc, default=1))
        occurrences: dict[str, int] = {}
        first = len(out.items)
        for index, (agent, block) in enumerate(blocks):
            line = line_of(block)

            def bad(fld: str | None, message: str, rid: str | None = None) -> None:
                out.errors.append(record_error(str(path), index, line_of(block, fld, line) if fld else line,
                                               rid, fld, message))
                out.sources[key] = False

            if not isinstance(block, dict):
                bad(None, f"a memory block must be an object, got {type(block).__name__}")
                continue
            label = block.get("label")
            if not isinstance(label, str) or not label.strip():
                bad("label", "a memory block needs a non-empty text 'label'")
                continue
            label = label.strip()
            value = block.get("value")
            if value is None:
                value = ""
            if not isinstance(value, str):
                bad("value", f"must be text, got {type(value).__name__}", label)
                continue
            limit = block.get("limit")
            if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
                bad("limit", f"must be a non-negative integer, got {limit!r}", label)
                continue
            try:
                created = parse_time(block.get("created_at"))
            except ValueError as exc:
                bad("created_at", str(exc), label)
                continue
            value = value.strip()
            if not value:
                continue
            over = limit is not None and len(value) > limit
            tags = [tag("agent", agent), tag("block", f"{agent}/{label}")]
            if isinstance(block.get("description"), str) and block["description"].strip():
                tags.append(tag("description", block["description"]))
            if block.get("read_only") is True:
                tags.append("read_only")
            if over:
                tags += ["over_limit", f"limit:{limit}"]
                out.warnings.append(f"{path}: " + (f"line {line}: " if line else "") +
                                    f"block {agent}/{label} holds {len(value)} characters, over its limit of "
                                    f"{limit}; flagged for review")
            lines = [ln for ln in value.splitlines() if ln.strip()]
            bulleted = sum(1 for ln in lines if _BULLET.match(ln)) >= 2
            if bulleted:
                texts = []
                for ln in lines:
                    m = _BULLET.match(ln)
                    t = " ".join((m.group(1) if m else ln).split())
                    if t and not t.endswith(":"):
                        texts.append(t)
            else:
                texts = [value]
            for t in texts:
                statement = t.strip()
                if bulleted:
                    k = f"{agent}\x1f{label}\x1f{norm_text(statement)}"
                    occurrences[k] = occurrences.get(k, 0) + 1
                    anchor = k + (f"\x1f{occurrences[k]}" if occurrences[k] > 1 else "")
                else:
                    anchor = f"{agent}\x1f{label}"
                mtype = _LABEL_TYPES.get(label.casefold()) or type_for_label(label) or type_for_text(statement)
                out.items.append(Item(
                    fmt="letta", path=str(path), source=source, index=len(out.items) - first, line=line, anchor=anchor,
                    statement=statement, type=mtype, repository_id=ctx.repository_id, tenant_id=ctx.tenant_id,
                    tags=list(tags), evidence=[{"type": "ref", "ref": f"letta:{agent}/{label}"}],
                    logical_key=None if bulleted else f"{agent}\x1f{label}", created_at=created,
                    requires_human_review=over, proposer_type="letta", proposer_id=agent,
                ))
    return out

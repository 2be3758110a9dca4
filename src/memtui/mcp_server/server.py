"""The MCP server of ``memtui mcp`` (issue 12 item 1; DESIGN.md "an agent"; seed 003 "small recall").

Read-only recall is broad, promotion narrow: an agent recalls, reads a memory recall could give it,
reports usage and harm, and -- only when the server runs with ``allow_propose`` -- proposes a
candidate. It never decides. Every call goes through the services the CLI uses:

========================================  ==============================================================
tool                                      service
========================================  ==============================================================
``recall(task, scope?, limit?)``          :func:`memtui.recall.recall` (usage events, the agent as actor)
``get_memory(memory_id)``                 :func:`memtui.recall.recall_memory` (eligible memory only)
``report_usage(memory_id, outcome, ..)``  :func:`memtui.maintenance.usage.record_usage`
``report_harm(memory_id, issue)``         the same, outcome ``harm``: the memory is challenged (§16.3)
``propose_memory(...)``                   :func:`memtui.review.propose.propose_memory` (a candidate)
========================================  ==============================================================

Resources: ``memtui://memory/{memory_id}`` (as ``get_memory``) and
``memtui://recall/{repository}{?task,module,limit}`` (the pack ``recall`` gives).

The agent is ``Actor(type="agent", id=NAME)``: ``actor`` if given, else the name the MCP client
announced, else ``mcp-client``. An agent never sees a private repository
(:mod:`memtui.governance.visibility`). The server's ``scope`` (``tenant[/repository[/module]]``,
None: the whole store) bounds every argument: a scope outside it is refused, a memory outside it
is "not available" -- as is one that is blocked, conflicted, stale or otherwise ineligible, without
its text. Text sent to the agent is plain: terminal escape sequences removed and other control
characters shown as ``\\xNN`` (:func:`memtui.text.visible`); nothing interprets Rich markup.
Refusals come back as tool errors (``is_error``) whose message names the argument (``scope: ...``)
and nothing outside the caller's scope (issue 21 item 8: an unknown, out-of-scope or private
repository are the same "unknown repository"). Harm reports are bounded as
:mod:`memtui.maintenance.harm` says (a rate per agent; a quorum for protected memory).
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer, ResourceSecurity
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from sqlalchemy.engine import Engine

from memtui.domain.invariants import Actor
from memtui.domain.scopes import Scope, applies_within, in_scope
from memtui.mcp_server.stdio import SERVER_NAME, instructions, server_version
from memtui.text import control_problem, visible

#: Largest pack an agent may ask for (a recall pack is meant to be small).
MAX_LIMIT = 20
DEFAULT_AGENT = "mcp-client"



ScopeArg = Annotated[str | None, Field(description=(
    "repository:NAME[/module/path] or tenant/repository[/module/path]; default: the server's scope "
    "(or the store's only repository)"))]


def _plain(value: Any) -> Any:
    """``value`` with every string passed through :func:`visible` (structured content for the agent)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _answer(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=visible(text))], structured_content=_plain(data))


class MemtuiAgentServer:
    """The tools and resources over one store, for one server scope (see the module docstring)."""

    def __init__(self, engine: Engine, *, scope: Scope | None = None, allow_propose: bool = False,
                 actor: str | None = None):
        self.engine = engine
        self.scope = scope if scope is not None and scope.tenant is not None else None
        self.allow_propose = allow_propose
        self.actor_name = actor

    # ---- who and where --------------------------------------------------------------------------

    def agent(self, ctx: Context | None) -> Actor:
        """The calling agent: the configured name, else the client's announced name."""
        name = self.actor_name
        if not name and ctx is not None:
            try:
                params = ctx.session.client_params
                name = params.client_info.name if params and params.client_info else None
            except (ValueError, AttributeError):  # no request context (a direct call in a test)
                name = None
        name = (name or DEFAULT_AGENT).strip()
        if not name or control_problem("agent name", name):  # a client name holding escapes is not an id
            name = DEFAULT_AGENT
        return Actor(type="agent", id=name[:200])

    def scope_arg(self, text: str | None, argument: str = "scope") -> Scope:
        """The scope an argument names (``repository:NAME[/module]`` or ``tenant/repository[/module]``),
        or the server's scope when omitted; ToolError naming ``argument`` when it is malformed,
        unknown or outside the server's scope. The error names nothing the agent may not see
        (:func:`memtui.recall.resolve_visible_scope`; issue 21 item 8)."""
        from memtui.recall import resolve_visible_scope
        from memtui.recall import RecallError

        if text is None or not text.strip():
            if self.scope is None:
                raise ToolError(f"{argument}: required (this server serves the whole store); "
                                "write repository:NAME[/module] or tenant/repository[/module]")
            return self.scope
        try:
            scope = resolve_visible_scope(self.engine, text, self.agent(None), self.scope)
        except RecallError as exc:
            raise ToolError(f"{argument}: {exc}") from None
        if self.scope is not None and not (scope.tenant is not None and in_scope(
                scope.tenant, scope.repository, scope.module, self.scope)):
            raise ToolError(f"{argument}: {scope.label} lies outside this server's scope {self.scope.label}")
        return scope

    def recall_scope_arg(self, text: str | None) -> Scope:
        """The recall scope: the argument, else the server's scope, else the store's only repository
        (inside the server's tenant); it must name a repository."""
        from memtui.recall import sole_repository

        if (text is None or not text.strip()) and (self.scope is None or self.scope.repository is None):
            only = sole_repository(self.engine, self.scope)
            if only is not None:
                return only
        scope = self.scope_arg(text)
        if scope.repository is None:
            raise ToolError(f"scope: {scope.label} names no repository; recall needs repository:NAME[/module] "
                            "or tenant/repository[/module]")
        return scope

    # ---- tools ----------------------------------------------------------------------------------

    def recall(self, task: str, scope: str | None, limit: int, ctx: Context | None) -> CallToolResult:
        from memtui.recall import RecallError, format_pack_markdown, pack_to_json, recall

        if not (task or "").strip():
            raise ToolError("task: describe the task you are about to do, in words")
        if not 1 <= limit <= MAX_LIMIT:
            raise ToolError(f"limit: must be between 1 and {MAX_LIMIT}, not {limit}")
        s = self.recall_scope_arg(scope)
        label = "repository:" + s.repository + (f"/{s.module}" if s.module else "")
        try:
            pack = recall(self.engine, task, label, limit=limit, actor=self.agent(ctx), record=True)
        except RecallError as exc:  # the scope was checked above: a store whose history does not hold (issue 9)
            raise ToolError(f"recall refused: {exc}") from None
        return _answer(format_pack_markdown(pack), pack_to_json(pack))

    def available(self, memory_id: str, actor: Actor):
        """The memory as recall could return it to ``actor`` within the server's scope, or None."""
        from memtui.recall import RecallError, RecallScope, recall_memory

        if problem := control_problem("memory_id", memory_id):
            raise ToolError(problem)
        rscope = RecallScope(self.scope.repository, self.scope.module) if self.scope and self.scope.repository else None
        try:
            item = recall_memory(self.engine, memory_id, rscope, actor)
        except RecallError as exc:
            raise ToolError(f"memory_id: {exc}") from None
        if item is None or not applies_within(item.tenant_id, item.repository_id, item.module_path, self.scope):
            return None
        return item

    def get_memory(self, memory_id: str, ctx: Context | None) -> CallToolResult:
        from memtui.recall import recalled_lines, recalled_to_json

        item = self.available(memory_id, self.agent(ctx))
        if item is None:
            raise ToolError(f"memory_id: {memory_id} is not available (no such memory, or not one recall would "
                            "give you: outside this server's scope, not active, stale, conflicted or blocked)")
        return _answer("\n".join(recalled_lines(item)) + "\n", recalled_to_json(item))

    def report(self, memory_id: str, outcome: str, ctx: Context | None, *, workflow_run_id: str | None = None,
               issue: str | None = None) -> CallToolResult:
        from memtui.maintenance.harm import AGENT_QUORUM, HarmRateLimited
        from memtui.maintenance.usage import OUTCOMES, record_usage
        from memtui.review.lifecycle import MemoryNotFound
        from memtui.safety.guard import SecretInComment, refuse_secret_comment

        if outcome not in OUTCOMES:
            raise ToolError(f"outcome: must be one of {', '.join(o for o in OUTCOMES if o != 'harm')} "
                            "(use report_harm for harm), not " + repr(visible(outcome)))
        for name, value in (("memory_id", memory_id), ("workflow_run_id", workflow_run_id)):
            if problem := control_problem(name, value):
                raise ToolError(problem)
        try:
            refuse_secret_comment(issue, "issue")
        except SecretInComment as exc:
            raise ToolError(f"issue: {exc}") from None
        try:
            out = record_usage(self.engine, memory_id, outcome, self.agent(ctx), workflow_run_id=workflow_run_id,
                               issue=issue, within=self.scope)
        except MemoryNotFound:
            raise ToolError(f"memory_id: {memory_id} is not available (no such memory in this server's scope)"
                            ) from None
        except HarmRateLimited as exc:
            raise ToolError(f"report_harm: {exc}") from None
        except SecretInComment as exc:  # workflow_run_id: the service refuses on every path (issue 21 item 4)
            raise ToolError(str(exc)) from None  # "workflowRunId holds a secret (...)": names the field
        text = f"{memory_id}: usage {outcome} recorded ({out.usage_id})"
        if out.new_state:
            text += f"; the memory is now {out.new_state} and waits for a reviewer"
        elif outcome == "harm":
            text += (f"; the memory's state is unchanged (a high-impact or lead-owned memory is challenged once "
                     f"{AGENT_QUORUM} agents or a human report harm)")
        return _answer(text, {"usageId": out.usage_id, "memoryId": memory_id, "outcome": outcome,
                              "newState": out.new_state})

    def propose(self, statement: str, type_: str, scope: str, evidence: list[Any], failure_class: str | None,
                failure_type: str | None, source_action_ids: list[str] | None, ctx: Context | None) -> CallToolResult:
        from memtui.review.propose import Proposal, ProposalRefused, propose_memory

        s = self.scope_arg(scope)
        proposal = Proposal(statement=statement, type=type_, scope=s, evidence=evidence,
                            failure_class=failure_class or None, failure_type=failure_type or None,
                            source_action_ids=tuple(source_action_ids or ()))
        try:
            out = propose_memory(self.engine, proposal, self.agent(ctx))
        except ProposalRefused as exc:
            raise ToolError(str(exc)) from None
        if not out.created:
            head = f"{out.memory_id}: not written again: the same proposal is already in the store ({out.state})"
        elif out.state == "blocked":
            head = f"{out.memory_id}: stored blocked in {out.scope_label}, not as a candidate"
        else:
            head = f"{out.memory_id}: proposed as a candidate for review in {out.scope_label}"
        lines = [head]
        if out.secret_types:
            lines.append(f"blocked: the proposal held a secret ({', '.join(out.secret_types)}); it is stored redacted "
                         "and never recalled -- do not put credentials in memory")
        if out.redacted:
            lines.append("redacted personal data: " + ", ".join(f"{k} in {f}" for f, k in out.redacted))
        for sim in out.similar:
            what = "near-duplicate of" if sim.kind == "duplicate" else "conflicts with"
            lines.append(f"{what} {sim.memory_id} ({sim.state}, score {sim.score:g})")
        if not out.similar:
            lines.append("no near-duplicate or conflicting memory in this scope")
        if out.promotion and out.state == "candidate":
            lines.append(f"not promoted automatically: {out.promotion}")
        data = {"memoryId": out.memory_id, "state": out.state, "created": out.created, "scope": out.scope_label,
                "evidence": out.evidence_count, "secretTypes": list(out.secret_types),
                "redacted": [{"field": f, "kind": k} for f, k in out.redacted],
                "duplicateOf": [s.memory_id for s in out.similar if s.kind == "duplicate"],
                "conflictsWith": [s.memory_id for s in out.similar if s.kind == "conflict"],
                "similar": [{"memoryId": s.memory_id, "kind": s.kind, "score": s.score, "state": s.state}
                            for s in out.similar],
                "promotion": out.promotion}
        return _answer("\n".join(lines), data)


def build_server(engine: Engine, *, scope: Scope | None = None, allow_propose: bool = False,
                 actor: str | None = None) -> MCPServer:
    """The MCP server over ``engine`` (see the module docstring); ``propose_memory`` is registered only
    with ``allow_propose``."""
    core = MemtuiAgentServer(engine, scope=scope, allow_propose=allow_propose, actor=actor)
    where = core.scope.label if core.scope else "the whole store"
    server = MCPServer(SERVER_NAME, instructions=instructions(where),
                       version=server_version(), warn_on_duplicate_tools=False, log_level="WARNING")
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                open_world_hint=False)

    @server.tool(annotations=writes, structured_output=False)
    def recall(task: Annotated[str, Field(description="What you are about to do, in words.")],
               scope: ScopeArg = None,
               limit: Annotated[int, Field(description=f"At most this many memories (1-{MAX_LIMIT}).")] = 5,
               ctx: Context = None) -> CallToolResult:
        """A small pack of eligible project memory for a task (active, fresh, not conflicted, in scope), with
        its evidence and verification, and a note of what was left out and why. Records a usage event per
        memory returned."""
        return core.recall(task, scope, limit, ctx)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False), structured_output=False)
    def get_memory(memory_id: Annotated[str, Field(description="A memory id, as recall printed it.")],
                   ctx: Context = None) -> CallToolResult:
        """One memory, only if recall could return it to you (in scope, active, fresh, not conflicted,
        not blocked); otherwise 'not available'."""
        return core.get_memory(memory_id, ctx)

    @server.tool(annotations=writes, structured_output=False)
    def report_usage(memory_id: Annotated[str, Field(description="The memory you used.")],
                     outcome: Annotated[str, Field(description="positive, negative or neutral.")],
                     workflow_run_id: Annotated[str | None, Field(description="Your run's id, if any.")] = None,
                     ctx: Context = None) -> CallToolResult:
        """Record what came of using a memory (seed 000 §16.2)."""
        if outcome == "harm":
            raise ToolError("outcome: report harm with report_harm(memory_id, issue)")
        return core.report(memory_id, outcome, ctx, workflow_run_id=workflow_run_id)

    @server.tool(annotations=writes, structured_output=False)
    def report_harm(memory_id: Annotated[str, Field(description="The memory that misled you.")],
                    issue: Annotated[str, Field(description="What went wrong, in words.")],
                    ctx: Context = None) -> CallToolResult:
        """Report that a memory misled you: it is challenged and leaves recall until a reviewer decides
        (seed 000 §16.3)."""
        if not (issue or "").strip():
            raise ToolError("issue: say what went wrong")
        return core.report(memory_id, "harm", ctx, issue=issue)

    if allow_propose:
        @server.tool(annotations=writes, structured_output=False)
        def propose_memory(
            statement: Annotated[str, Field(description="One short, specific claim about the code base.")],
            type: Annotated[str, Field(description="repo_convention, code_fact, test_convention, runbook, "
                                                   "failure_lesson, ...")],
            scope: Annotated[str, Field(description="Where it holds: tenant/repository[/module/path] or "
                                                    "repository:NAME[/module/path]; never broader than the evidence.")],
            evidence: Annotated[list[dict[str, Any] | str], Field(description=(
                "What backs it: items such as {\"type\": \"file_span\", \"path\": \"src/A.java\", \"lines\": [10, 20], "
                "\"commitSha\": \"...\"}, {\"type\": \"symbol\", \"symbol\": \"A.run\", \"path\": \"src/A.java\"}, "
                "{\"type\": \"doc\", \"path\": \"docs/x.md\"} or a bare path."))],
            failure_class: Annotated[str | None, Field(description=(
                "For a failure lesson: agent_failure, environment_blocker, flaky_test, user_denied, "
                "wrong_assumption, incomplete_trace or unknown."))] = None,
            failure_type: Annotated[str | None, Field(description="A short failure type, e.g. missing_dependency.")] = None,
            source_action_ids: Annotated[list[str] | None, Field(description="Ids of the actions it came from.")] = None,
            ctx: Context = None,
        ) -> CallToolResult:
            """Propose a memory. It becomes a candidate for a human reviewer, never active memory. The answer
            names any existing memory it duplicates or contradicts: then stop proposing it."""
            return core.propose(statement, type, scope, evidence, failure_class, failure_type, source_action_ids, ctx)

    @server.resource("memtui://memory/{memory_id}", name="memory", mime_type="text/plain",
                     description="One memory, if recall could return it to you.")
    def memory_resource(memory_id: str, ctx: Context) -> str:
        try:
            item = core.available(memory_id, core.agent(ctx))
        except ToolError as exc:
            raise ResourceError(str(exc)) from None
        if item is None:
            raise ResourceNotFoundError(f"memory_id: {memory_id} is not available")
        from memtui.recall import recalled_lines

        return visible("\n".join(recalled_lines(item)) + "\n")

    @server.resource("memtui://recall/{repository}{?task,module,limit}", name="recall", mime_type="text/markdown",
                     description="The recall pack for a task in a repository (module optional), as the recall tool "
                                 "gives it.", security=ResourceSecurity(exempt_params={"task"}))
    def recall_resource(repository: str, ctx: Context, task: str = "", module: str = "", limit: str = "5") -> str:
        try:
            n = int(limit)
        except ValueError:
            raise ResourceError(f"limit: a whole number, not {visible(limit)!r}") from None
        label = "repository:" + repository + (f"/{module.strip('/')}" if module.strip("/") else "")
        try:
            answer = core.recall(task, label, n, ctx)
        except ToolError as exc:
            raise ResourceError(str(exc)) from None
        return answer.content[0].text

    return server


def run_stdio(engine: Engine, *, scope: Scope | None = None, allow_propose: bool = False,
              actor: str | None = None) -> None:
    """Serve over stdin/stdout until the client closes the connection (the SDK's own transport;
    ``memtui mcp`` uses :func:`memtui.mcp_server.stdio.serve`, which answers ``initialize`` first)."""
    build_server(engine, scope=scope, allow_propose=allow_propose, actor=actor).run("stdio")

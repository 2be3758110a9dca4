"""The maintenance HTTP API of design §24 (issue 12): FastAPI over the same services as the CLI.

``create_app(engine)`` builds the app over a store ``memtui serve`` opened (the transport never opens
the store nor reads its tables itself: every read is a service call, issue 21 item 9); it runs on
uvicorn. Every endpoint but ``/docs`` and ``/openapi.json`` needs ``Authorization: Bearer TOKEN``
(:mod:`memtui.governance.tokens`); a reviewer token acts with that reviewer's role and scopes, an
agent token only recalls, reads a memory recall could give it (as MCP ``get_memory``) and reports
usage and harm (anything else is 403, audited ``role_refused``). Each request is one
service call, one transaction (review.service, review.resolve, recall, the revalidation job, the
reports); errors are problem details (:mod:`memtui.api.problems`). JSON fields are camelCase as in
the design's records; untrusted text in answers is plain (:func:`memtui.text.visible_data`).

On SQLite the writes of one server are serialized by a lock (one writer at a time is what SQLite
allows; the services still retry a write lock another process holds); on PostgreSQL they run
concurrently and a decision that lost a race answers 409 "changed by".
"""


import base64
import contextlib
import threading
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.engine import Engine
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse

from memtui.api.problems import ApiProblem, problem_for, problem_response, service_errors, validation_problem
from memtui.clock import iso
from memtui.domain.invariants import Actor
from memtui.text import json_text, visible_data

#: Request bodies above this many bytes are refused with 413.
MAX_BODY_BYTES = 64 * 1024
MAX_QUEUE_PAGE = 500


class PlainJSONResponse(JSONResponse):
    """JSON whose strings hold no terminal escape or control character (:func:`memtui.text.visible_data`)."""

    def render(self, content: Any) -> bytes:
        return json_text(visible_data(content), indent=None).encode("utf-8")


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReviewBody(_Body):
    """A reviewer decision on one memory (seed 000 §24 ``POST /memory/candidates/{id}/review``)."""

    decision: Literal["approve", "reject", "needs_review"]
    comment: str | None = Field(None, max_length=4000, description="Why; kept on the history event.")
    expected_version: int = Field(alias="expectedVersion", ge=1,
                                  description="The version you looked at (GET /memory/{id}); 409 if it moved.")


class ArchiveBody(_Body):
    comment: str | None = Field(None, max_length=4000)
    expected_version: int = Field(alias="expectedVersion", ge=1)


class NarrowScope(_Body):
    module_path: str | None = Field(None, alias="modulePath", max_length=1000)
    applies_to: list[str] | None = Field(None, alias="appliesTo", max_length=100)
    does_not_apply_to: list[str] | None = Field(None, alias="doesNotApplyTo", max_length=100)


class ResolveBody(_Body):
    """A conflict resolution, as ``memtui resolve`` takes it."""

    action: Literal["keep_a", "keep_b", "neither", "not_a_conflict", "narrow",
                    "keep-a", "keep-b", "not-a-conflict"]
    supersede: bool = False
    scopes: dict[str, NarrowScope] | None = Field(None, description="With narrow: memory id -> narrower scope.")


class RecallBody(_Body):
    task: str = Field(min_length=1, max_length=4000)
    scope: str = Field(max_length=1000, description="repository:NAME or repository:NAME/module/path")
    limit: int = Field(5, ge=1, le=50)
    record: bool = Field(True, description="Write usage events (one per memory in the pack).")


class UsageBody(_Body):
    outcome: Literal["positive", "negative", "neutral", "harm"]
    workflow_run_id: str | None = Field(None, alias="workflowRunId", max_length=200)
    issue: str | None = Field(None, max_length=4000)


def _duplicate_key(body: bytes) -> str | None:
    """The first key a JSON body repeats (at any depth), or None (not JSON, or no repeat): the rule
    file import applies (:func:`memtui.importers.reader.json_strict`; issue 21 item 8)."""
    from memtui.importers.reader import DuplicateKey, json_strict

    try:
        json_strict(body)
    except DuplicateKey as exc:
        return exc.key
    except (ValueError, RecursionError):  # not JSON: the validation of the endpoint says so
        pass
    return None


class _BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes (declared or streamed) answers 413; a
    JSON body that repeats a key answers 422 naming the key (never "last one wins")."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        too_large = ApiProblem(413, "too-large", "Request body too large",
                               f"the request body exceeds {self.limit} bytes", field="body")
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await problem_response(too_large)(scope, receive, send)
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                return await problem_response(too_large)(scope, receive, send)
            more = message.get("more_body", False)
        body, replayed = b"".join(chunks), False
        if body.strip() and (key := _duplicate_key(body)) is not None:
            return await problem_response(ApiProblem(
                422, "validation", "Invalid request",
                f"body: duplicate key {key!r}: a JSON object may name a field once (as file import requires)",
                field=key))(scope, receive, send)

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)


class _State:
    def __init__(self, engine: Engine):
        self.engine = engine
        sqlite = engine.dialect.name == "sqlite"
        self.write_lock = threading.Lock() if sqlite else contextlib.nullcontext()


def _encode_cursor(rank: int, memory_id: str) -> str:
    return base64.urlsafe_b64encode(f"{rank}:{memory_id}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[int, str]:
    try:
        rank, memory_id = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode().split(":", 1)
        return int(rank), memory_id
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiProblem(422, "validation", "Invalid request", "cursor: not a cursor this API gave",
                         field="cursor") from exc


def _warm(engine: Engine) -> None:
    """Recall's warm-up for agents (and every viewer who sees what they see)."""
    from memtui.recall import warm_quietly

    warm_quietly(engine, None, Actor(type="agent", id="api"), "memtui serve")


def create_app(engine: Engine) -> FastAPI:
    """The API over the store ``engine`` (migrated: :func:`memtui.store.engine.open_store`)."""
    from memtui.domain.decisions import Decision
    from memtui.governance.reviewers import audit_apart
    from memtui.governance.tokens import TokenRefused, authenticate, refuse_agent
    from memtui.review.service import MemoryOutOfScope, ReviewService

    state = _State(engine)

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        """At start, warm recall in the background (issue 22 item 2): the first request does not wait
        for the pools it does not need, and one that needs a pool being read waits for that one only."""
        threading.Thread(target=_warm, args=(engine,), name="memtui-api-warm", daemon=True).start()
        yield

    app = FastAPI(title="memtui maintenance API", version="1", default_response_class=PlainJSONResponse,
                  lifespan=lifespan,
                  description="The maintenance API of design §24. Authenticate with `Authorization: Bearer TOKEN` "
                              "(`memtui tokens create NAME [--agent]`). Errors are RFC 9457 problem details.")
    app.state.memtui = state
    app.add_middleware(_BodyLimit, limit=MAX_BODY_BYTES)
    bearer = HTTPBearer(auto_error=False, description="A token from `memtui tokens create`.")

    @app.exception_handler(ApiProblem)
    async def _api_problem(_request, exc: ApiProblem):
        return problem_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request, exc: RequestValidationError):
        return problem_response(validation_problem(list(exc.errors())))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request, exc: StarletteHTTPException):
        titles = {404: "Not found", 405: "Method not allowed"}
        return problem_response(ApiProblem(exc.status_code, "http", titles.get(exc.status_code, "HTTP error"),
                                           str(exc.detail), headers=getattr(exc, "headers", None)))

    async def _service_error(_request, exc: Exception):
        p = problem_for(exc)
        if p is None:
            p = ApiProblem(500, "internal", "Internal error", f"{type(exc).__name__}: the request failed")
        return problem_response(p)

    for cls in (*service_errors(), Exception):  # Exception: an unforeseen error is a 500 problem too
        app.add_exception_handler(cls, _service_error)

    def caller(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> Actor:
        """The authenticated actor (401 otherwise)."""
        if creds is None:
            raise TokenRefused("missing", "a bearer token is required (Authorization: Bearer TOKEN; "
                                          "memtui tokens create)")
        return authenticate(engine, creds.credentials)

    async def reviewer(request: Request, actor: Annotated[Actor, Depends(caller)]) -> Actor:
        """A reviewer token's actor; an agent token is refused (403, audited). ``async``: no thread-pool
        hop for a check that touches the store only to audit a refusal."""
        route = request.scope.get("route")
        refuse_agent(engine, actor, f"{request.method} {getattr(route, 'path', request.url.path)}")
        return actor

    Caller = Annotated[Actor, Depends(caller)]
    Reviewer = Annotated[Actor, Depends(reviewer)]
    MemoryId = Annotated[str, Path(max_length=200, description="The memory id.")]

    def _decided(out) -> dict:
        return {"memoryId": out.memory_id, "fromState": out.from_state, "toState": out.to_state,
                "eventId": out.event_id, "version": out.version}

    @app.post("/memory/candidates/{memory_id}/review", tags=["review"])
    def review(memory_id: MemoryId, body: ReviewBody, actor: Reviewer) -> dict:
        """Approve, reject or send a memory to review, against the version you saw (409 when it moved)."""
        decision = {"approve": Decision.APPROVE, "reject": Decision.REJECT,
                    "needs_review": Decision.NEEDS_REVIEW}[body.decision]
        with state.write_lock:
            out = ReviewService(engine).decide(memory_id, decision, actor, comment=body.comment,
                                               expected_version=body.expected_version)
        return _decided(out)

    @app.post("/memory/{memory_id}/archive", tags=["review"])
    def archive(memory_id: MemoryId, body: ArchiveBody, actor: Reviewer) -> dict:
        """Archive a memory (a lead for high-impact memory), against the version you saw."""
        with state.write_lock:
            out = ReviewService(engine).decide(memory_id, Decision.ARCHIVE, actor, comment=body.comment,
                                               expected_version=body.expected_version)
        return _decided(out)

    @app.post("/memory/{memory_id}/revalidate", tags=["maintenance"])
    def revalidate(memory_id: MemoryId, actor: Reviewer) -> dict:
        """Revalidate one memory against HEAD of its repository's registered checkout, with the engine
        maintenance uses (one transaction with its job row; changes by system:maintenance)."""
        from memtui.clock import utcnow
        from memtui.maintenance.revalidation_job import revalidate_memory

        svc = ReviewService(engine, actor)
        try:
            svc.detail(memory_id)
        except MemoryOutOfScope:
            audit_apart(engine, "scope_refused", actor.id, memory_id, operation="revalidate",
                        scopes=list(actor.scopes or ()))
            raise
        with state.write_lock:
            result = revalidate_memory(engine, memory_id, utcnow())
        d = svc.detail(memory_id)
        return {"memoryId": memory_id, "jobId": result.job_id, "state": d.state, "version": d.version,
                "changes": result.changes,
                "revalidation": {"status": d.revalidation_status, "reasons": list(d.revalidation_reasons),
                                 "proposedStatement": d.proposed_statement},
                "evidence": [{"type": e.type, "location": e.location, "status": e.status,
                              "reasonCode": e.reason_code, "reason": e.status_reason} for e in d.evidence]}

    @app.get("/repositories/{repository_id}/memory/health", tags=["health"])
    def health(repository_id: Annotated[str, Path(max_length=200)], actor: Reviewer) -> dict:
        """The repository's counts per state, as ``memtui health --json`` gives them (inside your scopes);
        404 for a repository that does not exist or lies outside your scopes alike (issue 21)."""
        from memtui.governance.visibility import repositories_within
        from memtui.review.service import health_json

        report = health_json(engine, actor, repository_id)
        if not report["memoryHealth"] and repository_id not in {r for _t, r in repositories_within(engine, None, actor)}:
            raise ApiProblem(404, "not-found", "Not found", f"no repository {repository_id!r} with memory you may see")
        return report

    @app.post("/memory/conflicts/{conflict_id}/resolve", tags=["review"])
    def resolve(conflict_id: Annotated[str, Path(max_length=200)], body: ResolveBody, actor: Reviewer) -> dict:
        """Resolve a conflict: keep_a, keep_b, neither, not_a_conflict or narrow (as ``memtui resolve``)."""
        from memtui.review.resolve import ResolveService

        scopes = {mid: s.model_dump(by_alias=True, exclude_unset=True) for mid, s in (body.scopes or {}).items()}
        with state.write_lock:
            r = ResolveService(engine).resolve_conflict(conflict_id, body.action.replace("-", "_"), actor,
                                                        supersede=body.supersede, scopes=scopes)
        return {"decisionId": r.decision_id, "kind": r.kind, "action": r.action,
                "changes": {mid: {"fromState": a, "toState": b} for mid, (a, b) in sorted(r.changes.items())}}

    @app.get("/memory/{memory_id}", tags=["memory"])
    def get_memory(memory_id: MemoryId, actor: Caller) -> dict:
        """One memory with its evidence, state and version (as ``memtui show --json``). An agent token
        reads only what MCP ``get_memory`` gives an agent (:func:`memtui.recall.recall_memory`: in use,
        fresh, not conflicted, not blocked, not private); anything else is 404 "not available"."""
        from memtui.review.views import detail_json

        if actor.type == "agent":
            from memtui.recall import recall_memory

            if recall_memory(engine, memory_id, None, actor) is None:
                raise ApiProblem(404, "not-available", "Not available",
                                 f"{memory_id} is not available (no such memory, or not one recall would give you: "
                                 "not active, stale, conflicted or blocked)")
        return detail_json(ReviewService(engine, actor).detail(memory_id))

    @app.get("/memory/{memory_id}/history", tags=["memory"])
    def get_history(memory_id: MemoryId, actor: Reviewer) -> dict:
        """The append-only state history, oldest first (as ``memtui history --json``)."""
        from memtui.review.views import event_json

        return {"memoryId": memory_id, "events": [event_json(e) for e in ReviewService(engine, actor).history(memory_id)]}

    @app.get("/review-queue", tags=["review"])
    def review_queue(
        actor: Reviewer,
        state_: Annotated[list[str] | None, Query(alias="state", description="Queue states (repeatable).")] = None,
        type_: Annotated[str | None, Query(alias="type", max_length=80)] = None,
        repository: Annotated[str | None, Query(max_length=200)] = None,
        reason_code: Annotated[str | None, Query(alias="reasonCode", max_length=60)] = None,
        cursor: Annotated[str | None, Query(max_length=400, description="nextCursor of the previous page.")] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_QUEUE_PAGE)] = 50,
    ) -> dict:
        """The review queue in the TUI's order (needs_review, challenged, candidate, approved; then id),
        a page at a time; filters by state, type, repository and revalidation reason code."""
        from memtui.domain.states import QUEUE_STATES

        queue_states = [s.value for s in QUEUE_STATES]
        for s in state_ or ():
            if s not in queue_states:
                raise ApiProblem(422, "validation", "Invalid request",
                                 f"state: {s!r} is not a queue state ({', '.join(queue_states)})", field="state")
        after = _decode_cursor(cursor) if cursor else None
        page = ReviewService(engine, actor).queue_page(after, limit + 1, states=state_ or None, memory_type=type_,
                                                       repository_id=repository, reason_code=reason_code)
        items = page[:limit]
        more = len(page) > limit
        return {
            "items": [{"memoryId": i.memory_id, "state": i.state, "type": i.type, "statement": i.statement,
                       "scope": {"tenantId": i.scope.tenant_id, "repositoryId": i.scope.repository_id,
                                 "modulePath": i.scope.module_path},
                       "confidence": i.confidence, "createdAt": iso(i.created_at), "version": i.version}
                      for i in items],
            "nextCursor": _encode_cursor(items[-1].rank, items[-1].memory_id) if more else None,
        }

    @app.post("/recall", tags=["recall"])
    def recall_pack(body: RecallBody, actor: Caller) -> dict:
        """A small pack of eligible memories for a task, and what was left out and why (as ``memtui
        recall --json``); usage events name the caller."""
        from memtui.recall import resolve_visible_scope
        from memtui.recall import RecallError, pack_to_json, recall

        lock = state.write_lock if body.record else contextlib.nullcontext()
        try:
            with lock:
                pack = recall(engine, body.task, body.scope, limit=body.limit, actor=actor, record=body.record)
        except RecallError:
            resolve_visible_scope(engine, body.scope, actor)  # a refused scope, as the caller may see it (issue 21)
            raise
        return pack_to_json(pack)

    @app.post("/memory/{memory_id}/usage", tags=["recall"])
    def report_usage(memory_id: MemoryId, body: UsageBody, actor: Caller) -> dict:
        """Record a use of a memory (``memtui usage``); harm challenges it (seed 000 §16.3)."""
        from memtui.maintenance.usage import record_usage

        with state.write_lock:
            out = record_usage(engine, memory_id, body.outcome, actor, workflow_run_id=body.workflow_run_id,
                               issue=body.issue, viewer=actor)
        return {"usageId": out.usage_id, "memoryId": out.memory_id, "outcome": out.outcome, "newState": out.new_state}

    @app.get("/reports/{name}", tags=["reports"])
    def report(name: Annotated[str, Path(max_length=100)], actor: Reviewer,
               now: Annotated[str | None, Query(description="Fix the report's clock (ISO-8601).")] = None) -> dict:
        """One maintenance report of ``memtui report`` by name (e.g. ``memory-health-report``), as JSON.
        Reports cover the whole store: a reviewer who does not see all of it is refused."""
        from memtui.clock import parse_time, utcnow
        from memtui.governance.reviewers import require_whole_store
        from memtui.reports.maintenance import build_report

        require_whole_store(engine, actor, f"report {name}")  # 403, audited, as `memtui report` (issue 21)
        try:
            clock = parse_time(now) if now else utcnow()
        except ValueError as exc:
            raise ApiProblem(422, "validation", "Invalid request", f"now: {exc}", field="now") from exc
        try:
            return build_report(engine, name, clock)
        except KeyError as exc:
            raise ApiProblem(404, "not-found", "Not found", exc.args[0], field="name") from exc

    return app


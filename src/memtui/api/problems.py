"""Errors of the HTTP API as RFC 9457 problem details (``application/problem+json``).

Every error answer is ``{"type", "title", "status", "detail"}`` plus, where it applies, ``field``
(the offending request field, e.g. ``expectedVersion``, ``scope``, ``state``), ``invariant`` (the
lifecycle invariant that refused) and ``errors`` (every validation error). The services' exceptions
map to statuses here, once:

=====================================  =======================================================
exception                              status
=====================================  =======================================================
TokenRefused                           401, ``WWW-Authenticate: Bearer``
ActorRefused, ScopeRefused,            403 (an agent deciding, a role or scope refusal; the
MemoryOutOfScope                       refusal is audited where the CLI audits it)
MemoryNotFound, an unknown conflict    404
VersionChanged                         409 "ID changed by ACTOR at TIME: look again ..."
TransitionRefused, DecisionError,      409 (the memory's state does not allow it)
ResolveError, RevalidationUnavailable
InvariantViolation, SecretInComment,   422 with the lifecycle's reason
RecallError, validation errors
a body over the limit                  413
a body repeating a JSON key            422 naming the key in ``field``
HarmRateLimited (an agent's harm       429 with ``Retry-After``
reports over the hourly limit)
SQLite still locked after retries      503 with ``Retry-After``
=====================================  =======================================================
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from memtui.text import json_text, visible_data

PROBLEM_TYPE = "urn:memtui:problem:"
MEDIA_TYPE = "application/problem+json"


class ApiProblem(Exception):
    """Raise from an endpoint to answer with a problem: ``status``, a ``slug`` for the type URI,
    ``title``, ``detail``; ``field`` names the offending request field."""

    def __init__(self, status: int, slug: str, title: str, detail: str, *, field: str | None = None,
                 headers: dict[str, str] | None = None, **extra: Any):
        super().__init__(detail)
        self.status, self.slug, self.title, self.detail = status, slug, title, detail
        self.field, self.headers, self.extra = field, headers or {}, extra


def problem_response(p: ApiProblem) -> Response:
    """The problem as a response; untrusted text in it is plain (:func:`memtui.text.visible_data`)."""
    body: dict[str, Any] = {"type": PROBLEM_TYPE + p.slug, "title": p.title, "status": p.status, "detail": p.detail}
    if p.field is not None:
        body["field"] = p.field
    body.update(p.extra)
    return Response(json_text(visible_data(body), indent=None), status_code=p.status, media_type=MEDIA_TYPE,
                    headers=p.headers)


def problem_for(exc: Exception) -> ApiProblem | None:
    """The problem a service exception answers with, or None (not one of ours: a 500)."""
    import sqlalchemy as sa

    from memtui.domain.decisions import DecisionError, VersionChanged
    from memtui.domain.invariants import InvariantViolation, ScopeRefused, TransitionRefused
    from memtui.governance.reviewers import ActorRefused, GovernanceError
    from memtui.governance.tokens import TokenRefused
    from memtui.maintenance.harm import HarmRateLimited
    from memtui.maintenance.revalidation_job import RevalidationUnavailable
    from memtui.recall import RecallError
    from memtui.review.lifecycle import MemoryNotFound
    from memtui.review.resolve import ResolveError
    from memtui.review.service import MemoryOutOfScope
    from memtui.safety.guard import SecretInComment, SecretRefused
    from memtui.store.engine import StoreReadOnly, is_lock_conflict

    text = str(exc)
    if isinstance(exc, StoreReadOnly):  # issue 21 item 7
        return ApiProblem(409, "read-only", "The store is read-only", text)
    if isinstance(exc, TokenRefused):
        challenge = 'Bearer realm="memtui"' + ("" if exc.reason == "missing" else ', error="invalid_token"')
        return ApiProblem(401, "unauthorized", "Unauthorized", text, headers={"WWW-Authenticate": challenge},
                          reason=exc.reason)
    if isinstance(exc, HarmRateLimited):
        return ApiProblem(429, "rate-limited", "Too many harm reports", text, field="outcome",
                          headers={"Retry-After": str(exc.retry_after)})
    if isinstance(exc, MemoryOutOfScope):
        return ApiProblem(403, "out-of-scope", "Outside your scopes", text)
    if isinstance(exc, ScopeRefused):
        return ApiProblem(403, "scope-refused", "Outside your scopes", text)
    if isinstance(exc, ActorRefused):
        return ApiProblem(403, "forbidden", "Forbidden", text)
    if isinstance(exc, GovernanceError):
        return ApiProblem(422, "invalid-request", "Invalid request", text)
    if isinstance(exc, MemoryNotFound):
        return ApiProblem(404, "not-found", "Not found", text)
    if isinstance(exc, VersionChanged):
        return ApiProblem(409, "version-changed", "Changed since you looked", text, field="expectedVersion")
    if isinstance(exc, InvariantViolation):
        return ApiProblem(422, "invariant", "Refused by an invariant", text, invariant=exc.invariant)
    if isinstance(exc, SecretInComment):
        return ApiProblem(422, "secret-in-comment", "Refused: the text holds a secret", text,
                          field=exc.field if isinstance(exc, SecretRefused) else "comment")  # issue 21 item 4
    if isinstance(exc, ResolveError) and text.startswith("no conflict "):
        return ApiProblem(404, "not-found", "Not found", text)
    if isinstance(exc, (TransitionRefused, DecisionError, ResolveError, RevalidationUnavailable)):
        return ApiProblem(409, "state-conflict", "Not allowed in the memory's state", text)
    if isinstance(exc, RecallError):
        return ApiProblem(422, "invalid-recall", "Invalid recall", text,
                          field="limit" if text.startswith("limit") else "scope")
    if isinstance(exc, sa.exc.OperationalError) and is_lock_conflict(exc):
        return ApiProblem(503, "busy", "Store busy", "the store is busy with other writers; try again",
                          headers={"Retry-After": "1"})
    return None


def service_errors() -> tuple[type[Exception], ...]:
    """The exception classes :func:`problem_for` maps (the app registers a handler for each)."""
    import sqlalchemy as sa

    from memtui.domain.invariants import LifecycleError
    from memtui.governance.reviewers import GovernanceError
    from memtui.maintenance.harm import HarmRateLimited
    from memtui.maintenance.revalidation_job import RevalidationUnavailable
    from memtui.recall import RecallError
    from memtui.review.lifecycle import MemoryNotFound

    return (LifecycleError, GovernanceError, MemoryNotFound, RecallError, RevalidationUnavailable,
            HarmRateLimited, sa.exc.OperationalError)


def validation_problem(errors: list[dict]) -> ApiProblem:
    """A 422 naming the first offending field (``body`` for a body that is missing or not JSON), with
    every error listed (``errors``: field and message)."""
    listed = []
    for e in errors:
        loc = [str(x) for x in e.get("loc", ())]
        if loc and loc[0] in ("body", "query", "path", "header") and len(loc) > 1:
            loc = loc[1:]
        if e.get("type") == "json_invalid":
            loc = ["body"]
        listed.append({"field": ".".join(loc) or "body", "message": e.get("msg", "invalid")})
    first = listed[0] if listed else {"field": "body", "message": "invalid request"}
    return ApiProblem(422, "validation", "Invalid request", f"{first['field']}: {first['message']}",
                      field=first["field"], errors=listed)

"""Reviewer scopes (issue 9, item 2): which memory a reviewer may see and decide. Pure, no I/O.

A scope is written ``tenant[/repository[/module]]``; ``*`` alone is every tenant. A memory
(tenant_id, repository_id, module_path) lies inside a scope when

- the scope is ``*``, or
- the tenants are equal and the scope names no repository (a tenant-level scope covers the
  tenant's org-wide memory and all its repositories), or
- the repositories are equal too and the scope names no module, or
- the memory's module path is the scope's module or lies below it (``src/a`` covers
  ``src/a/b``, not ``src/ab``).

An org-wide memory (repository None) is inside a tenant-level scope only; a repository-wide
memory (module None) is not inside a module-level scope: a scope never reaches up to broader
memory (the same direction as the scope invariant, DESIGN.md invariant 2).

Canonical scopes (issue 21, item 2): every entry (import, edit, API, MCP, CLI flags) passes tenant,
repository and module path through :func:`canonical_key` / :func:`canonical_module_path` once, so
what is stored and compared is one spelling:

- tenant and repository keys are lower case (``ACME`` is ``acme``), without surrounding blanks;
  a key that is empty, ``.``/``..``, has an empty part (``a//b``, ``/a``, ``a/``) or holds a
  backslash or a control character is refused naming the field;
- a module path is repository-relative POSIX: backslashes become ``/``, repeated, leading and
  trailing ``/`` and ``.`` segments go, and ``a/../b`` is resolved to ``b``; a ``..`` that climbs
  above the repository root (``a/../../b``) is refused naming the field; an empty result (``.``,
  ``/``) is no module (the whole repository).

:func:`in_scope` and :func:`applies_within` compare canonical forms, so a stored path written before
this rule still cannot reach outside a scope by ``..`` (a path that climbs out lies in no module
scope); ``memtui check`` lists such rows (:func:`scope_problems`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

EVERY_TENANT = "*"


class ScopeSyntaxError(ValueError):
    """A scope string that is not ``tenant[/repository[/module]]`` or ``*``; the message says why."""


class NotCanonical(ScopeSyntaxError):
    """A tenant, repository or module path that cannot be made canonical (issue 21, item 2);
    ``field`` names it (``modulePath``, ``tenantId`` ...), the message says which rule refused it."""

    def __init__(self, field: str, value: str, why: str):
        self.field, self.value = field, value
        #: the message without the field: for callers that name the field themselves
        self.detail = (f"{why} ({value!r}); canonical scope rule (issue 21): a scope names lower-case "
                       "keys and a module path inside its repository")
        super().__init__(f"field '{field}': {self.detail}")


def _controls(text: str) -> bool:
    return any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text)


def canonical_key(value: str | None, field: str = "repositoryId") -> str | None:
    """A tenant or repository key in canonical form: stripped and lower case; None stays None.

    Raises :class:`NotCanonical` naming ``field`` for an empty key, a part that is empty, ``.`` or
    ``..`` (``a//b``, a leading or trailing ``/``, ``../x``: a key may be ``owner/name``, never a
    path that climbs), a backslash, or a control character."""
    if value is None:
        return None
    raw = str(value)
    key = raw.strip()
    if not key:
        raise NotCanonical(field, raw, "an empty key")
    if _controls(key):
        raise NotCanonical(field, raw, "a key holds control characters")
    if "\\" in key:
        raise NotCanonical(field, raw, "a key holds a backslash")
    if any(part in ("", ".", "..") for part in key.split("/")):
        raise NotCanonical(field, raw, "a key is a name, not a path: no '.', '..' or empty parts")
    return key.lower()


def canonical_module_path(path: str | None, field: str = "modulePath") -> str | None:
    """A module path in canonical form (rules in the module doc), or None for none/the repository root.

    ``"src\\a//b/./c/"`` -> ``"src/a/b/c"``; ``"a/x/../b"`` -> ``"a/b"``; ``"a/../../b"`` raises
    :class:`NotCanonical` naming ``field`` (``..`` climbs above the repository root)."""
    if path is None:
        return None
    raw = str(path)
    if _controls(raw):
        raise NotCanonical(field, raw, "a module path holds control characters")
    parts: list[str] = []
    for part in raw.replace("\\", "/").split("/"):
        if not part.strip() or part == ".":
            continue
        if part == "..":
            if not parts:
                raise NotCanonical(field, raw, "'..' climbs above the repository root")
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts) or None


def scope_problems(tenant_id: str | None, repository_id: str | None, module_path: str | None,
                   fields: tuple[str, str, str] = ("tenant_id", "repository_id", "module_path")) -> list[str]:
    """Why a stored (tenant, repository, module path) is not canonical: one sentence per field, each
    naming the field, the stored value and its canonical form (or why there is none); [] when canonical."""
    out = []
    for name, value, norm in zip(fields, (tenant_id, repository_id, module_path),
                                 (canonical_key, canonical_key, canonical_module_path)):
        if value is None:
            continue
        try:
            canonical = norm(value, name)
        except NotCanonical as exc:
            out.append(str(exc))
            continue
        if canonical != value:
            out.append(f"field '{name}': {value!r} is not canonical (canonical: {canonical!r})")
    return out


@dataclass(frozen=True)
class Scope:
    """A parsed scope; ``tenant`` None means every tenant (``*``)."""

    tenant: str | None
    repository: str | None = None
    module: str | None = None

    @property
    def label(self) -> str:
        """The scope as the user writes it."""
        if self.tenant is None:
            return EVERY_TENANT
        return "/".join(p for p in (self.tenant, self.repository, self.module) if p)


def parse_scope(text: str) -> Scope:
    """``"acme"``, ``"acme/order-service"``, ``"acme/order-service/src/pricing"`` or ``"*"`` -> Scope,
    canonical (issue 21, item 2: keys lower case, the module path resolved, see the module doc).

    Raises :class:`ScopeSyntaxError` for an empty string, an empty part (``acme//x``), ``*`` inside
    a longer scope, or control characters; :class:`NotCanonical` for a module path whose ``..``
    climbs above the repository root or a key that cannot be canonical."""
    raw = (text or "").strip()
    if not raw:
        raise ScopeSyntaxError("a scope is tenant[/repository[/module]] or *, not empty")
    if any(ord(c) < 32 or ord(c) == 127 for c in raw):
        raise ScopeSyntaxError(f"scope {raw!r} holds control characters")
    if raw == EVERY_TENANT:
        return Scope(None)
    tenant, _, rest = raw.partition("/")
    repository, _, module = rest.partition("/")
    parts = [tenant] + ([repository] if rest else [])
    if any(not p or p == EVERY_TENANT for p in parts) or EVERY_TENANT in module.split("/"):
        raise ScopeSyntaxError(f"scope {raw!r} is not tenant[/repository[/module]] (or * alone)")
    return Scope(canonical_key(tenant, "scope tenant"),
                 canonical_key(repository, "scope repository") if repository else None,
                 canonical_module_path(module, "scope module") if module else None)


def _canonical_or_none(module_path: str | None) -> str | None | bool:
    """The canonical module path, or False when it has none (``..`` above the root)."""
    try:
        return canonical_module_path(module_path)
    except NotCanonical:
        return False


def _same_key(a: str | None, b: str | None) -> bool:
    return a == b or (a is not None and b is not None and a.strip().lower() == b.strip().lower())


def _module_within(module_path: str | None, scope_module: str) -> bool:
    path = _canonical_or_none(module_path)
    if not path:  # none, the repository root, or a path climbing out of its repository
        return False
    scope_path = _canonical_or_none(scope_module)
    if not scope_path:
        return False
    return path == scope_path or path.startswith(scope_path + "/")


def in_scope(tenant_id: str, repository_id: str | None, module_path: str | None, scope: Scope) -> bool:
    """Whether the memory (tenant_id, repository_id, module_path) lies inside ``scope`` (rules above)."""
    if scope.tenant is None:
        return True
    if not _same_key(tenant_id, scope.tenant):
        return False
    if scope.repository is None:
        return True
    if not _same_key(repository_id, scope.repository):
        return False
    return scope.module is None or _module_within(module_path, scope.module)


def in_scopes(tenant_id: str, repository_id: str | None, module_path: str | None,
              scopes: Iterable[str | Scope] | None) -> bool:
    """Whether the memory lies inside any of ``scopes``; ``None`` means unrestricted (always True)."""
    if scopes is None:
        return True
    return any(in_scope(tenant_id, repository_id, module_path, s) for s in _parsed(scopes))


def _parsed(scopes: Iterable[str | Scope]) -> Iterable[Scope]:
    """``scopes`` parsed; a stored scope that no longer parses (not canonical, issue 21) covers nothing."""
    for s in scopes:
        if isinstance(s, Scope):
            yield s
            continue
        try:
            yield parse_scope(s)
        except ScopeSyntaxError:
            continue


def covers_repository(scopes: Iterable[str | Scope] | None, tenant_id: str, repository_id: str) -> bool:
    """Whether ``scopes`` include the whole repository or part of it (a module of it counts):
    the test for who may see a ``private`` repository's memory. ``None`` (unrestricted) is True."""
    if scopes is None:
        return True
    for s in _parsed(scopes):
        if s.tenant is None or (_same_key(s.tenant, tenant_id)
                                and (s.repository is None or _same_key(s.repository, repository_id))):
            return True
    return False


def applies_within(tenant_id: str, repository_id: str | None, module_path: str | None, scope: Scope | None) -> bool:
    """Whether a memory is one a recall inside ``scope`` considers (the recall pool and its scope
    match, :mod:`memtui.recall`): same tenant; the memory org-wide or of the scope's repository;
    module paths unset on either side or one within the other. ``None`` or ``*``: always True.
    Broader than :func:`in_scope`, which never reaches up to broader memory."""
    if scope is None or scope.tenant is None:
        return True
    if not _same_key(tenant_id, scope.tenant):
        return False
    if repository_id is None or scope.repository is None:
        return True
    if not _same_key(repository_id, scope.repository):
        return False
    path, scope_path = _canonical_or_none(module_path), _canonical_or_none(scope.module)
    if path is False or scope_path is False:
        return False  # a path climbing out of its repository applies nowhere
    if path is None or scope_path is None:
        return True
    a, b = path + "/", scope_path + "/"
    return a.startswith(b) or b.startswith(a)

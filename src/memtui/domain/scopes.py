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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

EVERY_TENANT = "*"


class ScopeSyntaxError(ValueError):
    """A scope string that is not ``tenant[/repository[/module]]`` or ``*``; the message says why."""


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
    """``"acme"``, ``"acme/order-service"``, ``"acme/order-service/src/pricing"`` or ``"*"`` -> Scope.

    Raises :class:`ScopeSyntaxError` for an empty string, an empty part (``acme//x``), ``*`` inside
    a longer scope, or control characters."""
    raw = (text or "").strip()
    if not raw:
        raise ScopeSyntaxError("a scope is tenant[/repository[/module]] or *, not empty")
    if any(ord(c) < 32 or ord(c) == 127 for c in raw):
        raise ScopeSyntaxError(f"scope {raw!r} holds control characters")
    if raw == EVERY_TENANT:
        return Scope(None)
    tenant, _, rest = raw.partition("/")
    repository, _, module = rest.partition("/")
    module = module.strip("/")
    parts = [tenant] + ([repository] if rest else []) + ([module] if module else [])
    if any(not p or p == EVERY_TENANT for p in parts) or "//" in raw:
        raise ScopeSyntaxError(f"scope {raw!r} is not tenant[/repository[/module]] (or * alone)")
    return Scope(tenant, repository or None, module or None)


def _module_within(module_path: str | None, scope_module: str) -> bool:
    if not module_path:
        return False
    path = module_path.strip("/")
    return path == scope_module or path.startswith(scope_module + "/")


def in_scope(tenant_id: str, repository_id: str | None, module_path: str | None, scope: Scope) -> bool:
    """Whether the memory (tenant_id, repository_id, module_path) lies inside ``scope`` (rules above)."""
    if scope.tenant is None:
        return True
    if tenant_id != scope.tenant:
        return False
    if scope.repository is None:
        return True
    if repository_id != scope.repository:
        return False
    return scope.module is None or _module_within(module_path, scope.module)


def in_scopes(tenant_id: str, repository_id: str | None, module_path: str | None,
              scopes: Iterable[str | Scope] | None) -> bool:
    """Whether the memory lies inside any of ``scopes``; ``None`` means unrestricted (always True)."""
    if scopes is None:
        return True
    return any(in_scope(tenant_id, repository_id, module_path, s if isinstance(s, Scope) else parse_scope(s))
               for s in scopes)


def covers_repository(scopes: Iterable[str | Scope] | None, tenant_id: str, repository_id: str) -> bool:
    """Whether ``scopes`` include the whole repository or part of it (a module of it counts):
    the test for who may see a ``private`` repository's memory. ``None`` (unrestricted) is True."""
    if scopes is None:
        return True
    for s in scopes:
        s = s if isinstance(s, Scope) else parse_scope(s)
        if s.tenant is None or (s.tenant == tenant_id and s.repository in (None, repository_id)):
            return True
    return False


def applies_within(tenant_id: str, repository_id: str | None, module_path: str | None, scope: Scope | None) -> bool:
    """Whether a memory is one a recall inside ``scope`` considers (the recall pool and its scope
    match, :mod:`memtui.recall`): same tenant; the memory org-wide or of the scope's repository;
    module paths unset on either side or one within the other. ``None`` or ``*``: always True.
    Broader than :func:`in_scope`, which never reaches up to broader memory."""
    if scope is None or scope.tenant is None:
        return True
    if tenant_id != scope.tenant:
        return False
    if repository_id is None or scope.repository is None:
        return True
    if repository_id != scope.repository:
        return False
    if module_path is None or scope.module is None:
        return True
    a, b = module_path.strip("/") + "/", scope.module.strip("/") + "/"
    return a.startswith(b) or b.startswith(a)

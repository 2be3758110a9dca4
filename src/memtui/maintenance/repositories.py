"""Register the repositories whose checkouts maintenance reads."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.clock import utcnow
from memtui.sources.git import SourceError
from memtui.store.models import Repository

__all__ = ["SourceError", "list_repositories", "register_checkout", "register_repository"]


def register_repository(engine: Engine, repository_id: str, checkout_path: Path | str | None,
                        tenant_id: str = "default") -> Repository:
    """Add or update the repository ``repository_id`` with its checkout path (absolute). One transaction.
    The keys are canonical (issue 21 item 2; :class:`memtui.domain.scopes.NotCanonical` otherwise); a
    secret in the name, tenant or path is refused (:class:`memtui.safety.guard.SecretRefused`)."""
    from memtui.domain.scopes import canonical_key
    from memtui.safety.guard import refuse_secret_fields

    # a name or path holding a secret is refused, naming the field (issue 21 item 4: SecretRefused)
    refuse_secret_fields(("repository name", repository_id), ("tenant", tenant_id),
                         ("checkout path", str(checkout_path) if checkout_path else None))
    repository_id, tenant_id = canonical_key(repository_id, "repository"), canonical_key(tenant_id, "tenant")
    path = str(Path(checkout_path).resolve()) if checkout_path else None
    with Session(engine, expire_on_commit=False) as session, session.begin():
        repo = session.get(Repository, repository_id)
        if repo is None:
            repo = Repository(repository_id=repository_id, tenant_id=tenant_id, checkout_path=path,
                              added_at=utcnow())
        else:
            repo.checkout_path, repo.tenant_id = path, tenant_id
        session.add(repo)
        return repo


def register_checkout(engine: Engine, repository_id: str, checkout: Path | str, tenant_id: str = "default") -> str:
    """:func:`register_repository` once git reads a commit in ``checkout`` (the CLI's ``repo add`` and
    ``import --repo``: the CLI reaches git only through here). Returns that HEAD's sha. Raises
    :class:`SourceError` (re-exported from :mod:`memtui.sources.git`) when ``checkout`` is no git
    checkout with a commit; nothing is registered then. Otherwise raises as :func:`register_repository`."""
    from memtui.sources.git import head_sha

    head = head_sha(checkout)
    register_repository(engine, repository_id, checkout, tenant_id=tenant_id)
    return head


def list_repositories(engine: Engine) -> list[tuple[str, str, str | None]]:
    """(repository_id, tenant_id, checkout_path) of every registered repository, by id."""
    with Session(engine) as session:
        return [(r.repository_id, r.tenant_id, r.checkout_path)
                for r in session.exec(select(Repository).order_by(Repository.repository_id))]

"""Alembic environment: runs on the connection memtui hands over (see memtui.store.engine)."""

from alembic import context
from sqlmodel import SQLModel

import memtui.store.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from memtui.store.engine import is_model_object

config = context.config
target_metadata = SQLModel.metadata


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        from memtui.store.engine import make_engine

        with make_engine(config.get_main_option("sqlalchemy.url")).begin() as conn:
            context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True,
                          include_name=is_model_object)
            with context.begin_transaction():
                context.run_migrations()
        return
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True,
                          include_name=is_model_object)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()

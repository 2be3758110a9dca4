"""The demo: a real order-service repository (a git bundle) and its memories, set up in one call.

Used by ``memtui demo`` and ``make demo``; tests use it to get a realistic store.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from sqlalchemy.engine import Engine

from memtui.domain.invariants import Actor
from memtui.importers.native import ImportReport, import_files
from memtui.maintenance.repositories import register_repository
from memtui.sources.git import clone_bundle

SAMPLE_REPOSITORY_ID = "order-service"
SAMPLE_TENANT_ID = "acme"


class SampleDataMissing(FileNotFoundError):
    """The sample data folder cannot be found."""


def sample_data_dir() -> Path:
    """``MEMTUI_SAMPLE_DATA`` if set, else ``sample_data/`` of the source checkout memtui runs from."""
    env = os.environ.get("MEMTUI_SAMPLE_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2] / "sample_data")
    for c in candidates:
        if (c / "order-service.bundle").is_file() and (c / "memories.yaml").is_file():
            return c
    raise SampleDataMissing(
        "sample data not found (looked in " + ", ".join(str(c) for c in candidates)
        + "); set MEMTUI_SAMPLE_DATA to the folder holding order-service.bundle and memories.yaml"
    )


@dataclass(frozen=True)
class DemoSetup:
    """Where the demo checkout is, its HEAD, and what the import did."""

    checkout: Path
    head: str
    report: ImportReport


def set_up_demo(engine: Engine, workdir: Path | str, actor: Actor, *, fresh: bool = False,
                progress: Callable[[str], None] | None = None) -> DemoSetup:
    """Clone the sample repository into ``workdir/order-service`` (kept if already there unless
    ``fresh``), register it, and import ``memories.yaml`` (idempotent). Returns a DemoSetup."""
    say = progress or (lambda _msg: None)
    data = sample_data_dir()
    checkout = Path(workdir) / SAMPLE_REPOSITORY_ID
    if fresh and checkout.exists():
        shutil.rmtree(checkout)
    if not (checkout / ".git").exists():
        checkout.parent.mkdir(parents=True, exist_ok=True)
        say(f"cloning the sample repository into {checkout}")
        head = clone_bundle(data / "order-service.bundle", checkout)
    else:
        from memtui.sources.git import head_sha

        head = head_sha(checkout)
    register_repository(engine, SAMPLE_REPOSITORY_ID, checkout, tenant_id=SAMPLE_TENANT_ID)
    say("importing sample_data/memories.yaml")
    report = import_files(engine, [data / "memories.yaml"], actor)
    return DemoSetup(checkout, head, report)

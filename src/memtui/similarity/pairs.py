"""The labelled statement pairs (``tests/data/labelled_pairs.yaml``) and their frozen blind split
(issue 10, item 3): a pair is blind iff ``int(sha256(a + "\\n" + b), 16) % 10 < 3``."""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
LABELLED = ROOT / "tests" / "data" / "labelled_pairs.yaml"
FRESH = ROOT / "tests" / "data" / "pairs_unused" / "fresh_heldout.yaml"
KINDS = ("duplicate", "conflict", "neither")


def is_blind(a: str, b: str) -> bool:
    """True for the ~30% of pairs frozen out of training and tuning."""
    return int(hashlib.sha256((a + "\n" + b).encode()).hexdigest(), 16) % 10 < 3


def target(label: str) -> str:
    """The scorer's class of a label: duplicate, conflict, or neither (related, unrelated)."""
    return label if label in ("duplicate", "conflict") else "neither"


def load(path: Path = LABELLED, split: str | None = None) -> list[dict]:
    """The pairs of ``path`` (dicts with a, b, label, stack, ...); ``split`` ``"blind"`` or ``"train"``
    keeps one side of the blind split, None keeps all. FileNotFoundError when ``path`` is absent (the
    data is in the source tree, not in the wheel)."""
    pairs = yaml.safe_load(path.read_text(encoding="utf-8"))["pairs"]
    if split is None:
        return pairs
    want = split == "blind"
    return [p for p in pairs if is_blind(p["a"], p["b"]) == want]

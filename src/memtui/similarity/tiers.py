"""Two tiers of judgement (issue 20, item 3): only confident verdicts act.

A *likely* conflict is opened (both memories held out of default recall, approval blocked until it is
resolved); a *possible* one is a ranked suggestion that acts on nothing. Likewise a likely duplicate
cluster is proposed for a merge and a possible duplicate pair is only shown. :func:`pair_hash` names
the statements a verdict or a dismissal was made on, so a dismissal lasts until either changes.
"""

from __future__ import annotations

import hashlib


def pair_hash(a: str, b: str) -> str:
    """sha256 (hex) of two statements, order-independent."""
    x, y = sorted((a, b))
    return hashlib.sha256(f"{x}\x00{y}".encode()).hexdigest()

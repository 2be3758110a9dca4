"""Who may cause which outcome: the lead gate judged by outcome, not by edge (issue 21, Build item 1).

A change of state is judged by where the memory ends up and by where it started its current review
(:func:`review_start`: the state it had before the run of review states — ``needs_review``,
``challenged`` — it is in now; its own state when it is in none), so no sequence of steps does what
one step may not: an active architecture decision sent to review and then rejected is taken out of
use, exactly as if it had been rejected at once. :func:`outcome` names the outcome and
:data:`AUTHORITY` says who may cause it; :func:`check_authority` is called by
:func:`memtui.domain.invariants.check_transition`, which :func:`memtui.review.lifecycle.transition`
— the one function every state change passes (decide, batch, undo, merge, resolve, supersede,
compaction, prune, import, the HTTP API, MCP) — feeds with the review start from the history.

=========  ===================================================================  ====================
outcome    the change                                                           high-impact memory:
                                                                                who may cause it
=========  ===================================================================  ====================
admit      into use (approved, active) from anything not in use, and back into  lead
           use after a review (an approval after review is a fresh judgement)
retire     out of use (rejected, invalidated, superseded, expired, deprecated,  lead, system
           archived, or back to candidate) when in use at the review start
dismiss    a candidate (never in use) to one of those states: a judgement that  lead, system
           it is wrong (invariant 6 asks a lead for that as for approval)
hold       to review (needs_review, challenged): out of default recall, but     anyone
           nothing is decided; it waits in the queue for a decision (agents'
           challenges have limits of their own, issue 21 item 8)
stay       in use to in use (approved -> active), or an undo that takes back a  anyone
           hold or a block (the memory is where it was before them)
contain    blocked while in use at the review start: it leaves use as a retirement  lead, system
           does (a reviewer holds it with needs-review; the scanner blocks itself)
block      a secret or other unsafe content, not in use: containment (audited)   anyone
tidy       between states out of use (rejected -> archived), back to candidate  anyone
           from out of use, or the undo of a decision's creation of a memory
=========  ===================================================================  ====================

Who: ``lead`` a human with the role lead; ``human`` any other human (reviewer, maintainer);
``agent``; ``system`` a maintenance job acting by evidence or policy (expiry, revalidation), never by
judgement — it may retire, never admit (invariant 8 limits its promotions further). Normal memory:
anyone may cause any outcome (scopes and the other invariants still apply). High impact
(:func:`memtui.domain.invariants.is_high_impact`): an architecture decision, impact ``high`` or an
org-wide scope.
"""

from __future__ import annotations

from typing import Iterable

from memtui.domain.states import LIVE_STATES, State

#: States that hold a memory for review: a review that began elsewhere runs through them.
REVIEW_STATES: frozenset[str] = frozenset({State.NEEDS_REVIEW, State.CHALLENGED})
#: States out of use (the outcome of a retirement or dismissal); ``blocked`` is apart (safety).
OUT_OF_USE_STATES: frozenset[str] = frozenset(
    {State.REJECTED, State.INVALIDATED, State.SUPERSEDED, State.EXPIRED, State.DEPRECATED, State.ARCHIVED}
)

ANYONE: frozenset[str] = frozenset({"lead", "human", "agent", "system"})
#: Who may cause each outcome to high-impact memory (see the module docstring); normal memory: :data:`ANYONE`.
AUTHORITY: dict[str, frozenset[str]] = {
    "admit": frozenset({"lead"}),
    "retire": frozenset({"lead", "system"}),
    "dismiss": frozenset({"lead", "system"}),
    "hold": ANYONE,
    "stay": ANYONE,
    "contain": frozenset({"lead", "system"}),
    "block": ANYONE,
    "tidy": ANYONE,
}

#: How a refusal names each restricted outcome.
_WHAT = {
    "admit": "putting high-impact memory in use needs a lead's approval",
    "retire": "taking high-impact memory out of use needs a lead",
    "dismiss": "rejecting or retiring a high-impact candidate needs a lead",
    "contain": ("blocking high-impact memory in use needs a lead (send it to needs-review to hold it out "
                "of recall at once; the secret scanner blocks by itself)"),
}
HIGH_IMPACT_WORDS = "architecture decision, impact high or org-wide scope"


def who(actor_type: str, role: str | None) -> str:
    """The actor's column in :data:`AUTHORITY`: ``lead``, ``human``, ``agent`` or ``system``."""
    if actor_type == "human":
        return "lead" if role == "lead" else "human"
    return actor_type if actor_type in ("agent", "system") else "agent"


def review_start(state: str | None, steps: Iterable[tuple[str | None, str]]) -> str | None:
    """Where the current review of a memory in ``state`` began: ``state`` itself unless it is a review
    state; else the state before the trailing run of review states in ``steps`` — the memory's effective
    changes ``(from, to)`` oldest first (notes left out, undone changes struck;
    :func:`memtui.review.lifecycle.effective_events`). None: it was created in review (never in use
    here). A review state with no history to explain it is returned as is (judged as never in use)."""
    if state not in REVIEW_STATES:
        return state
    start: str | None = state
    for frm, to in reversed(list(steps)):
        if to not in REVIEW_STATES:
            break
        start = frm
        if frm not in REVIEW_STATES:
            break
    return start


def outcome(start: str | None, current: str | None, to: str, *, undo: bool = False,
            undoes_creation: bool = False) -> str:
    """The outcome (a key of :data:`AUTHORITY`) of moving a memory now in ``current``, whose review
    began in ``start`` (:func:`review_start`), to ``to``. ``undo``: a compensating change back to the
    state before a decision; ``undoes_creation``: it archives a memory the undone decision created."""
    in_use_before = start in LIVE_STATES or current in LIVE_STATES
    if to == State.BLOCKED:
        return "contain" if in_use_before else "block"
    if to in REVIEW_STATES:
        return "hold"
    if to in LIVE_STATES:
        if current in LIVE_STATES:
            return "stay"
        if undo and (current in REVIEW_STATES or current == State.BLOCKED):
            return "stay"  # the hold or block is taken back: the memory is where it was before it
        return "admit"
    if undoes_creation and current not in LIVE_STATES:
        return "tidy"
    if in_use_before:
        return "retire"
    if to in OUT_OF_USE_STATES and (start is None or start == State.CANDIDATE or start in REVIEW_STATES):
        return "dismiss"
    return "tidy"


def refusal(kind: str, high_impact: bool, actor_kind: str) -> str | None:
    """Why ``actor_kind`` (:func:`who`) may not cause outcome ``kind``, or None when it may."""
    if not high_impact or actor_kind in AUTHORITY[kind]:
        return None
    return _WHAT[kind]


def describe(kind: str, start: str | None, current: str | None, to: str) -> str:
    """The path a refusal names: ``active -> needs_review -> invalidated`` (the review start first)."""
    steps = [start or "(new)"] + ([current] if current != start else []) + [to]
    return " -> ".join(str(s) for s in steps)

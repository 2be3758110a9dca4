"""Decision reports (issue 11, item 7): every reviewer decision, made through the real services and
CLI on SQLite and PostgreSQL, comes back in each format with its actor, comment, statement at the
time, states and evidence; filters select the right subset; untrusted text is neutralised."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
import yaml
from sqlmodel import Session
from typer.testing import CliRunner

from memtui.cli import app as memtui_app
from memtui.clock import parse_time
from memtui.domain.invariants import Actor
from tests.gitrepo import import_anchored
from memtui.reports.decisions import (CSV_COLUMNS, DecisionFilters, collect_decisions, decision_dicts, edit_texts,
                                      render_csv, render_json, render_markdown, render_yaml, report_dict)
from memtui.reports.export import REDACTED
from memtui.review.lifecycle import transition
from memtui.review.resolve import ResolveService
from memtui.review.service import ReviewService
from memtui.store.models import Memory, StateHistory

from tests.test_resolve import LEAD, REV, store  # noqa: F401  (store: the resolve suite's fixture, both databases)

BILLING = """
memories:
  - memoryId: mem_bill
    type: code_fact
    statement: "Invoices are immutable once issued."
    scope: {tenantId: acme, repositoryId: billing}
    state: candidate
    evidence:
      - {type: symbol, symbol: Invoice.issue}
"""
ESCAPE_COMMENT = "\x1b[31mstale?\x1b[0m see PaymentClient"
FORMULA_COMMENT = "=cmd|' /C calc'!A0"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _at(monkeypatch, when: str) -> None:
    monkeypatch.setenv("MEMTUI_NOW", when)


@pytest.fixture
def decided(store, tmp_path, monkeypatch):  # noqa: F811
    """The resolve suite's store plus a billing memory, then eight decisions on five days by two people."""
    f = tmp_path / "billing.yaml"
    f.write_text(BILLING)
    import_anchored(store, [f], LEAD, tmp_path)  # issue 21 item 3: the evidence in a checkout
    svc, res = ReviewService(store), ResolveService(store)
    ids = {}
    _at(monkeypatch, "2026-11-23T09:00:00Z")
    ids["approve_b"] = svc.decide("mem_b", "approve", REV, comment="span checked at HEAD").event_id
    _at(monkeypatch, "2026-11-24T10:00:00Z")
    ids["edit_c"] = svc.edit_statement("mem_c", LEAD, text="Validation rules live in OrderValidator.")
    _at(monkeypatch, "2026-11-25T11:00:00Z")
    ids["merge"] = res.merge("dup-1", REV, canonical_text="Rules are registered through RuleRegistry only.").decision_id
    _at(monkeypatch, "2026-11-26T12:00:00Z")
    ids["conflict"] = res.resolve_conflict("memconf_1", "keep_a", LEAD).decision_id
    _at(monkeypatch, "2026-11-27T13:00:00Z")
    ids["reject_d"] = svc.decide("mem_d", "reject", REV, comment=FORMULA_COMMENT).event_id
    _at(monkeypatch, "2026-11-28T08:00:00Z")
    ids["undo_d"] = svc.undo(ids["reject_d"], REV).event_id
    _at(monkeypatch, "2026-11-29T09:00:00Z")
    ids["review_e"] = svc.decide("mem_e", "needs-review", LEAD, comment=ESCAPE_COMMENT).event_id
    _at(monkeypatch, "2026-11-30T10:00:00Z")
    ids["approve_bill"] = svc.decide("mem_bill", "approve", REV, comment="Invoice.issue seals it").event_id
    # an edit after the needs-review decision: that decision must still show the text as it was
    _at(monkeypatch, "2026-11-30T11:00:00Z")
    ids["edit_e"] = svc.edit_statement("mem_e", LEAD, text="RuleRegistry keeps the validation rules in order.")
    return store, ids


RR = "src/validation/RuleRegistry.java"
OV = "src/validation/OrderValidator.java"


def _shape(records):
    """Each record as plain tuples, ids left out (they are checked separately)."""
    return [(r.kind, r.action, r.actor, r.role, r.time.isoformat(), r.comment,
             [(c.memory_id, c.repository_id, c.statement, c.new_statement, c.from_state, c.to_state,
               c.evidence.count, c.evidence.by_status, c.evidence.paths) for c in r.memories])
            for r in records]


EXPECTED = [
    ("decide", "approve", "reviewer-1", "reviewer", "2026-11-23T09:00:00+00:00", "span checked at HEAD",
     [("mem_b", "os", "Validation uses RuleRegistry as the registry for rules.", None, "candidate", "active",
       2, {"valid": 2}, (RR,))]),
    ("edit", "edit", "lead-1", "lead", "2026-11-24T10:00:00+00:00", None,
     [("mem_c", "os", "Validation rules are configured directly in OrderValidator.",
       "Validation rules live in OrderValidator.", "active", "active", 1, {"valid": 1}, (OV,))]),
    # the canonical had one piece of evidence when the reviewer merged (the symbol is the merge's copy)
    ("merge", "merge", "reviewer-1", "reviewer", "2026-11-25T11:00:00+00:00", None,
     [("mem_a", "os", "Rules are registered through RuleRegistry.", "Rules are registered through RuleRegistry only.",
       "active", "active", 1, {"valid": 1}, (RR,)),
      ("mem_b", "os", "Validation uses RuleRegistry as the registry for rules.", None, "active", "superseded",
       2, {"valid": 2}, (RR,))]),
    ("conflict", "keep_a", "lead-1", "lead", "2026-11-26T12:00:00+00:00", None,
     [("mem_c", "os", "Validation rules live in OrderValidator.", None, "active", "invalidated", 1, {"valid": 1}, (OV,)),
      ("mem_a", "os", "Rules are registered through RuleRegistry only.", None, "active", "active",
       2, {"valid": 2}, (RR,))]),
    ("decide", "reject", "reviewer-1", "reviewer", "2026-11-27T13:00:00+00:00", FORMULA_COMMENT,
     [("mem_d", "os", "OrderValidator calls RuleRegistry.", None, "active", "invalidated", 1, {"valid": 1}, (OV,))]),
    ("undo", "undo", "reviewer-1", "reviewer", "2026-11-28T08:00:00+00:00", None,
     [("mem_d", "os", "OrderValidator calls RuleRegistry.", None, "invalidated", "active", 1, {"valid": 1}, (OV,))]),
    ("decide", "needs-review", "lead-1", "lead", "2026-11-29T09:00:00+00:00", ESCAPE_COMMENT,
     [("mem_e", "os", "RuleRegistry stores validation rules.", None, "active", "needs_review", 1, {"valid": 1}, (RR,))]),
    ("decide", "approve", "reviewer-1", "reviewer", "2026-11-30T10:00:00+00:00", "Invoice.issue seals it",
     [("mem_bill", "billing", "Invoices are immutable once issued.", None, "candidate", "active",
       1, {"unchecked": 1}, ("Invoice.issue",))]),
    ("edit", "edit", "lead-1", "lead", "2026-11-30T11:00:00+00:00", None,
     [("mem_e", "os", "RuleRegistry stores validation rules.", "RuleRegistry keeps the validation rules in order.",
       "needs_review", "needs_review", 1, {"valid": 1}, (RR,))]),
]


def test_every_decision_with_statement_states_actor_comment_and_evidence(decided):
    engine, ids = decided
    records = collect_decisions(engine)
    # imports (creation events by lead-1) are not decisions; everything else is, oldest first
    assert _shape(records) == EXPECTED
    assert [r.decision_id for r in records] == [ids[k] for k in ("approve_b", "edit_c", "merge", "conflict", "reject_d",
                                                                  "undo_d", "review_e", "approve_bill", "edit_e")]
    by_id = {r.decision_id: r for r in records}
    assert by_id[ids["undo_d"]].subject == ids["reject_d"]
    assert by_id[ids["reject_d"]].undone_by == ids["undo_d"]
    assert by_id[ids["merge"]].subject == "dup-1" and by_id[ids["conflict"]].subject == "memconf_1"
    assert [r.outcome for r in records] == ["approve", "edit", "merge", "conflict keep-a", "reject", "undo",
                                            "needs-review", "approve", "edit"]


@pytest.mark.parametrize("filters, keys", [
    (dict(since=parse_time("2026-11-26T12:00:00Z")),
     ["conflict", "reject_d", "undo_d", "review_e", "approve_bill", "edit_e"]),
    (dict(actor="lead-1"), ["edit_c", "conflict", "review_e", "edit_e"]),
    (dict(repository="billing"), ["approve_bill"]),
    (dict(repository="os", actor="reviewer-1", since=parse_time("2026-11-24")), ["merge", "reject_d", "undo_d"]),
    (dict(actor="nobody"), []),
])
def test_filters_select_the_right_decisions(decided, filters, keys):
    engine, ids = decided
    assert [r.decision_id for r in collect_decisions(engine, **filters)] == [ids[k] for k in keys]


def test_markdown_is_a_weekly_summary_by_reviewer_and_outcome(decided):
    engine, ids = decided
    md = render_markdown(collect_decisions(engine))
    assert not CONTROL.search(md)
    lines = md.splitlines()
    assert lines[:9] == [
        "# Decision report", "",
        "9 decisions by 2 reviewers, 2026-11-23T09:00:00Z to 2026-11-30T11:00:00Z.", "",
        "## Summary", "",
        "- **lead-1 (lead)**: 4 — edit 2, conflict keep-a 1, needs-review 1",
        "- **reviewer-1 (reviewer)**: 5 — approve 2, merge 1, reject 1, undo 1",
        "",
    ]
    headings = [ln for ln in lines if ln.startswith("##")]
    assert headings == ["## Summary", "## lead-1 (lead) — 4 decisions", "### edit — 2", "### conflict keep-a — 1",
                        "### needs-review — 1", "## reviewer-1 (reviewer) — 5 decisions", "### approve — 2",
                        "### merge — 1", "### reject — 1", "### undo — 1"]
    assert ("- `mem_b` candidate → active · \"Validation uses RuleRegistry as the registry for rules.\" · "
            "evidence 2 (valid 2) · 2026-11-23T09:00:00Z · comment: span checked at HEAD") in lines
    assert ("- `mem_bill` candidate → active · \"Invoices are immutable once issued.\" · evidence 1 (unchecked 1) · "
            "2026-11-30T10:00:00Z · comment: Invoice.issue seals it") in lines
    assert (f"- `mem_d` active → invalidated · \"OrderValidator calls RuleRegistry.\" · evidence 1 (valid 1) · "
            f"2026-11-27T13:00:00Z · comment: {FORMULA_COMMENT} · undone later ({ids['undo_d']})") in lines
    assert f"- merge of cluster `dup-1` · 2026-11-25T11:00:00Z · 2 memories" in lines
    assert ("  - `mem_a` active · \"Rules are registered through RuleRegistry.\" → \"Rules are registered through "
            "RuleRegistry only.\" · evidence 1 (valid 1)") in lines
    # the escape sequence is shown, not obeyed; its text stays readable
    review = next(ln for ln in lines if ln.startswith("- `mem_e` active → needs_review"))
    assert "\x1b" not in review and "stale?" in review and "see PaymentClient" in review
    # lead-1's section lists exactly lead-1's decisions
    lead_part = md.split("## lead-1 (lead)")[1].split("## reviewer-1")[0]
    assert lead_part.count("\n- ") == 4 and "mem_b" not in lead_part


def test_csv_has_one_row_per_memory_and_neutralises_formulas(decided):
    engine, ids = decided
    text = render_csv(collect_decisions(engine))
    assert not CONTROL.search(text.replace("\n", ""))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0].keys()) == CSV_COLUMNS
    assert [(r["decision_id"], r["memory_id"], r["from_state"], r["to_state"], r["actor"]) for r in rows] == [
        (ids["approve_b"], "mem_b", "candidate", "active", "reviewer-1"),
        (ids["edit_c"], "mem_c", "active", "active", "lead-1"),
        (ids["merge"], "mem_a", "active", "active", "reviewer-1"),
        (ids["merge"], "mem_b", "active", "superseded", "reviewer-1"),
        (ids["conflict"], "mem_c", "active", "invalidated", "lead-1"),
        (ids["conflict"], "mem_a", "active", "active", "lead-1"),
        (ids["reject_d"], "mem_d", "active", "invalidated", "reviewer-1"),
        (ids["undo_d"], "mem_d", "invalidated", "active", "reviewer-1"),
        (ids["review_e"], "mem_e", "active", "needs_review", "lead-1"),
        (ids["approve_bill"], "mem_bill", "candidate", "active", "reviewer-1"),
        (ids["edit_e"], "mem_e", "needs_review", "needs_review", "lead-1"),
    ]
    first = rows[0]
    assert (first["comment"], first["evidence_count"], first["evidence_by_status"], first["evidence_paths"],
            first["statement"], first["new_statement"], first["role"], first["time"]) == (
        "span checked at HEAD", "2", "valid=2", RR, "Validation uses RuleRegistry as the registry for rules.", "",
        "reviewer", "2026-11-23T09:00:00Z")
    assert rows[6]["comment"] == "'" + FORMULA_COMMENT and rows[6]["undone_by"] == ids["undo_d"]
    assert rows[8]["comment"] == "stale? see PaymentClient"  # escape sequences removed whole (text.visible)
    assert rows[1]["new_statement"] == "Validation rules live in OrderValidator."


def test_json_and_yaml_load_back_to_the_same_records(decided):
    engine, _ids = decided
    records = collect_decisions(engine)
    filters = DecisionFilters(actor=None)
    for text, load in ((render_json(records, filters), json.loads), (render_yaml(records, filters), yaml.safe_load)):
        assert not CONTROL.search(text.replace("\n", ""))
        data = load(text)
        assert data == report_dict(records, filters)
        assert data["decisions"] == decision_dicts(records)
        assert data["decisionReport"]["decisions"] == 9
        assert data["decisionReport"]["byReviewer"] == {
            "lead-1": {"edit": 2, "conflict keep-a": 1, "needs-review": 1},
            "reviewer-1": {"approve": 2, "merge": 1, "reject": 1, "undo": 1}}
        review = data["decisions"][6]
        assert (review["actor"], review["comment"], review["memories"][0]["statement"]) == (
            "lead-1", ESCAPE_COMMENT, "RuleRegistry stores validation rules.")


def test_a_blocked_memory_never_shows_its_text(store, monkeypatch):  # noqa: F811
    """Blocked memory (design invariant 5): the report shows the redaction marker, never the text
    from its history (the edit note holds the old and new statements). The code is one the
    scanner does not know as a secret (no password cue; issue 21 item 5 finds "the password is
    swordfish" at once), so it is blocked later, by hand."""
    svc = ReviewService(store)
    svc.edit_statement("mem_e", LEAD, text="The staging door code is swordfish.")
    svc.decide("mem_e", "needs-review", REV, comment="looks like a secret")
    with Session(store) as s, s.begin():
        transition(s, s.get(Memory, "mem_e"), "blocked", Actor("system", "secret-scan", "reviewer"), "secret found")
    records = collect_decisions(store)
    assert [(r.kind, r.memories[0].statement, r.memories[0].new_statement) for r in records] == [
        ("edit", REDACTED, None), ("decide", REDACTED, None)]
    for text in (render_markdown(records), render_csv(records), render_json(records), render_yaml(records)):
        assert "swordfish" not in text and "RuleRegistry stores validation rules" not in text
        assert "looks like a secret" in text


def test_compaction_and_its_undo_list_their_members(store):  # noqa: F811
    res = ResolveService(store)
    accepted = res.accept_compaction("memcomp_1", LEAD)
    undone = res.undo(accepted.decision_id, LEAD)
    records = collect_decisions(store)
    assert [(r.decision_id, r.kind, r.action, r.subject, r.undone_by) for r in records] == [
        (accepted.decision_id, "compaction", "accept", "memcomp_1", undone.decision_id),
        (undone.decision_id, "undo", "undo", accepted.decision_id, None)]
    new = accepted.new_memory_id
    proposed = "RuleRegistry: OrderValidator calls RuleRegistry; and RuleRegistry stores validation rules."
    assert [(c.memory_id, c.statement, c.from_state, c.to_state, c.evidence.count) for c in records[0].memories] == [
        (new, proposed, None, "active", 2),
        ("mem_d", "OrderValidator calls RuleRegistry.", "active", "superseded", 1),
        ("mem_e", "RuleRegistry stores validation rules.", "active", "superseded", 1)]
    assert [(c.memory_id, c.from_state, c.to_state) for c in records[1].memories] == [
        ("mem_e", "superseded", "active"), ("mem_d", "superseded", "active"), (new, "active", "archived")]
    md = render_markdown(records)
    assert f"- compaction accept: `memcomp_1` · 2026-11-30T12:00:00Z · 3 memories · undone later ({undone.decision_id})" in md
    assert f"  - `{new}` new → active · \"{proposed}\" · evidence 2 (valid 2)" in md


def test_a_merge_text_taken_away_by_undo_is_not_recorded_but_an_edit_in_between_is(store):  # noqa: F811
    res, svc = ResolveService(store), ReviewService(store)
    merged = res.merge("dup-1", REV, canonical_text="Merged text.")
    svc.edit_statement("mem_a", REV, text="Edited after the merge.")
    res.undo(merged.decision_id, REV)
    records = collect_decisions(store)
    edit = next(r for r in records if r.kind == "edit")
    assert (edit.memories[0].statement, edit.memories[0].new_statement) == ("Merged text.", "Edited after the merge.")
    merge = next(r for r in records if r.kind == "merge")
    assert (merge.memories[0].statement, merge.memories[0].new_statement) == (
        "Rules are registered through RuleRegistry.", "Merged text.")
    undo = next(r for r in records if r.kind == "undo")
    canon = next(c for c in undo.memories if c.memory_id == "mem_a")
    # before the undo mem_a said "Edited after the merge." (the edit note says so); after, the payload's text
    assert (canon.statement, canon.new_statement) == ("Edited after the merge.", "Rules are registered through RuleRegistry.")
    assert "(statement not recorded)" not in render_markdown(records)


@pytest.mark.parametrize("old, new", [
    ("plain", "also plain"),
    ("it's -> here", 'say "x" -> \'y\''),
    ("tab\tand \x1b[31m", "ünïcode ✓"),
])
def test_edit_texts_reads_back_what_edit_statement_writes(old, new):
    assert edit_texts(f"statement edited: {old!r} -> {new!r}") == (old, new)
    assert edit_texts(f"statement edited (revalidation's proposal: moved paths): {old!r} -> {new!r}") == (old, new)


def test_edit_texts_refuses_other_shapes():
    assert edit_texts("statement edited: 'a' + 'b'") is None
    assert edit_texts("reviewer decision: approve") is None
    assert edit_texts("statement edited: 'unterminated -> 'x'") is None


# ---- the command line --------------------------------------------------------------------------

def _cli(*args: str):
    return CliRunner().invoke(memtui_app, list(args))


def test_cli_formats_filters_out_and_errors(decided, store_url, tmp_path):
    engine, ids = decided
    expected = collect_decisions(engine)
    md = _cli("decisions", "export", "--db", store_url)
    assert md.exit_code == 0, md.output
    assert md.stdout == render_markdown(expected).rstrip("\n") + "\n"
    js = _cli("decisions", "export", "--format", "json", "--actor", "lead-1", "--db", store_url)
    assert js.exit_code == 0
    assert [d["decisionId"] for d in json.loads(js.stdout)["decisions"]] == [
        ids["edit_c"], ids["conflict"], ids["review_e"], ids["edit_e"]]
    out = tmp_path / "week.csv"
    r = _cli("decisions", "export", "--format", "csv", "--since", "2026-11-29", "--repository", "os",
             "--out", str(out), "--db", store_url)
    assert r.exit_code == 0 and "wrote 2 decisions to" in r.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert [x["decision_id"] for x in rows] == [ids["review_e"], ids["edit_e"]]
    y = _cli("decisions", "export", "--format", "yaml", "--repository", "billing", "--db", store_url)
    assert [d["memories"][0]["memoryId"] for d in yaml.safe_load(y.stdout)["decisions"]] == ["mem_bill"]

    bad = _cli("decisions", "export", "--since", "last week", "--db", store_url)
    assert bad.exit_code == 2 and "--since" in bad.stderr and "last week" in bad.stderr
    bad = _cli("decisions", "export", "--format", "xml", "--db", store_url)
    assert bad.exit_code == 2 and "--format" in bad.stderr
    missing = tmp_path / "no-such-folder" / "r.md"
    bad = _cli("decisions", "export", "--out", str(missing), "--db", store_url)
    assert bad.exit_code == 1 and "--out" in bad.stderr and not missing.parent.exists()


def test_acceptance_demo_store_decisions_with_comments(tmp_path, monkeypatch):
    """Issue 11's acceptance: on the demo store, after a few decisions with comments through the CLI,
    ``decisions export --format md`` names each decision's actor and comment."""
    from memtui.sample import set_up_demo
    from memtui.store.engine import open_store

    db = str(tmp_path / "demo.db")
    engine = open_store(db)
    set_up_demo(engine, tmp_path / "work", Actor("human", "loader", "lead"))
    steps = [("mem_retry_behavior_unknown", "reject", "ann", "reviewer", "Guesswork: the retry count is not in the code."),
             ("mem_wholesale_skips_total", "approve", "ann", "reviewer", "MaxOrderTotalRule skips wholesale orders."),
             ("mem_validator_test_cases", "needs-review", "lee", "lead", "Which test class? Ask the author.")]
    for mid, verb, who, role, why in steps:
        r = _cli("decide", mid, verb, "--comment", why, "--actor", who, "--role", role, "--db", db)
        assert r.exit_code == 0, r.output
    out = _cli("decisions", "export", "--format", "md", "--db", db)
    assert out.exit_code == 0
    md = out.stdout
    assert "3 decisions by 2 reviewers" in md
    assert "- **ann (reviewer)**: 2 — approve 1, reject 1" in md and "- **lee (lead)**: 1 — needs-review 1" in md
    for mid, _verb, _who, _role, why in steps:
        line = next(ln for ln in md.splitlines() if ln.startswith(f"- `{mid}`"))
        assert line.endswith(f"comment: {why}")
    # the sample's import events (by "loader") are not decisions
    assert "loader" not in md
    with Session(engine) as s:
        assert s.get(StateHistory, collect_decisions(engine)[0].decision_id).comment == steps[0][4]
    engine.dispose()


# ---- the TUI ---------------------------------------------------------------------------------

async def _settle(app, pilot):
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)  # the TUI path; the report on both stores above
async def test_palette_export_decisions_writes_the_markdown_report(decided, tmp_path, monkeypatch):
    from textual.command import CommandPalette

    from memtui.app import MemtuiApp
    from memtui.screens.dialogs import EditDialog

    engine, _ids = decided
    monkeypatch.chdir(tmp_path)
    app = MemtuiApp(engine, REV)
    async with app.run_test(size=(140, 36)) as pilot:
        await _settle(app, pilot)
        await pilot.press("ctrl+p")
        await _settle(app, pilot)
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"export decisions")
        await _settle(app, pilot)
        await pilot.press("enter")
        await _settle(app, pilot)
        assert isinstance(app.screen, EditDialog)
        await pilot.press("enter")  # the proposed file name in the current folder
        await _settle(app, pilot)
        target = tmp_path / "memtui-decisions-2026-11-30.md"
        assert target.read_text(encoding="utf-8") == render_markdown(collect_decisions(engine))
        assert [n.message for n in app._notifications] == [f"Wrote 9 decisions to {target}"]
        # asked for another path: written there
        await pilot.press("ctrl+p")
        await _settle(app, pilot)
        await pilot.press(*"export decisions", "enter")
        await _settle(app, pilot)
        await pilot.press("ctrl+a", "ctrl+k", *"sub/week.md")
        (tmp_path / "sub").mkdir()
        await pilot.press("enter")
        await _settle(app, pilot)
        assert (tmp_path / "sub" / "week.md").read_text(encoding="utf-8") == target.read_text(encoding="utf-8")
        # an unwritable path is said, nothing is written
        await pilot.press("ctrl+p")
        await _settle(app, pilot)
        await pilot.press(*"export decisions", "enter")
        await _settle(app, pilot)
        await pilot.press("ctrl+a", "ctrl+k", *"missing/week.md", "enter")
        await _settle(app, pilot)
        assert not (tmp_path / "missing").exists()
        assert list(app._notifications)[-1].message.startswith(f"Cannot write {tmp_path / 'missing' / 'week.md'}")


def test_merge_resolution_compaction_and_undo_keep_their_comments(store, store_url):  # noqa: F811
    """Issue 11, item 7: "every decision with ... comment" — the multi-memory decisions too, from the CLI."""
    res = ResolveService(store)
    merged = res.merge("dup-1", REV, comment="same rule, two wordings")
    r = _cli("resolve", "memconf_1", "keep-a", "--comment", "A cites the newer ADR", "--actor", "lead-1",
             "--role", "lead", "--db", store_url)
    assert r.exit_code == 0, r.output
    resolved = re.search(r"decision (dec_\S+)", r.stdout).group(1)
    r = _cli("undo-decision", merged.decision_id, "--comment", "merged too early", "--actor", REV.id,
             "--db", store_url)
    assert r.exit_code == 0, r.output
    undone = re.search(r"decision (dec_\S+)", r.stdout).group(1)
    secret = _cli("compaction", "reject", "memcomp_1", "--comment", "key AKIAIOSFODNN7EXAMPLE", "--db", store_url)
    assert secret.exit_code == 1 and "AKIAIOSFODNN7EXAMPLE" not in secret.output
    assert ResolveService(store).reject_compaction("memcomp_1", LEAD, comment="too broad").kind == "compaction"
    by_id = {d.decision_id: d for d in collect_decisions(store)}
    rejected = next(d for d in by_id.values() if (d.kind, d.action) == ("compaction", "reject"))
    assert [(by_id[k].kind, by_id[k].comment) for k in (merged.decision_id, resolved, undone)] + [
        (rejected.kind, rejected.comment)] == [
        ("merge", "same rule, two wordings"), ("conflict", "A cites the newer ADR"), ("undo", "merged too early"),
        ("compaction", "too broad")]
    md = _cli("decisions", "export", "--format", "md", "--db", store_url).stdout
    for why in ("same rule, two wordings", "A cites the newer ADR", "merged too early", "too broad"):
        assert f"comment: {why}" in md

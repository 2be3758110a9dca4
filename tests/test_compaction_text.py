"""The proposed compaction text (issue 24, Build 4): the subject once, each distinct fact once, from the
members' own words, markup stripped, never longer than the members together; re-running maintenance
updates an open proposal's text once and then changes nothing."""

from __future__ import annotations

import re

from sqlmodel import Session, select

from memtui.clock import parse_time
from memtui.domain.compaction import plain_text, propose_statement
from memtui.maintenance.compaction import compaction_records, propose_compactions
from memtui.store.models import CompactionProposal, Memory

MEMBERS = ["New validation rules should be added to RuleRegistry.",
           "RuleRegistry.register throws IllegalArgumentException when a rule id is registered twice.",
           "RuleRegistry holds every registered ValidationRule in a LinkedHashMap.",
           "Rules are kept in `rules[0..n]` in registration order, see [ADR-012] and [bold]RuleRegistry[/bold].",
           "OrderValidator calls RuleRegistry."]
MARKUP = re.compile(r"\[/?(bold|italic|b|i)\]|\[/\]|`|\*\*")


def test_demo_members_read_as_one_statement():
    text = propose_statement(MEMBERS, ["RuleRegistry"])
    assert text == ("RuleRegistry: holds every registered ValidationRule in a LinkedHashMap; new validation rules "
                    "should be added to RuleRegistry; RuleRegistry.register throws IllegalArgumentException when a "
                    "rule id is registered twice; rules are kept in rules[0..n] in registration order, see ADR-012; "
                    "OrderValidator calls RuleRegistry.")
    assert len(text) < len(" ".join(MEMBERS)) and not MARKUP.search(text)
    assert text.count("RuleRegistry:") == 1


def test_a_fact_said_twice_is_kept_once():
    text = propose_statement(["OrderValidator calls RuleRegistry.", "OrderValidator calls RuleRegistry.",
                              "RuleRegistry is a singleton. OrderValidator calls RuleRegistry."], ["RuleRegistry"])
    assert text == "RuleRegistry: is a singleton; OrderValidator calls RuleRegistry."


def test_a_fact_inside_a_longer_one_is_dropped():
    text = propose_statement(["Billing uses PaymentGateway.", "Billing uses PaymentGateway for refunds.",
                              "PaymentGateway retries three times."], ["PaymentGateway"])
    assert text == "PaymentGateway: retries three times; billing uses PaymentGateway for refunds."


def test_never_longer_than_the_members():
    members = ["A uses X.", "B uses X.", "C uses X."]  # the subject prefix would make it longer
    text = propose_statement(members, ["X"])
    assert text == "A uses X; B uses X; C uses X." and len(text) <= len(" ".join(members))


def test_markup_is_stripped_and_code_names_stay():
    assert plain_text("[bold]RuleRegistry[/bold] and [red on white]x[/] see [ADR-012](docs/adr.md)") == \
        "RuleRegistry and x see ADR-012"
    assert plain_text("**Always** use `order_id` in _snake_case_names_ and rules[0..n]") == \
        "Always use order_id in snake_case_names and rules[0..n]"
    assert plain_text("keep my_var_name and [ADR-7] but not [link=https://x.y]here[/link]") == \
        "keep my_var_name and ADR-7 but not here"


def test_demo_proposal_is_shorter_than_its_members_and_holds_no_markup(demo_copy):
    with Session(demo_copy) as s:
        proposals = list(s.exec(select(CompactionProposal).where(CompactionProposal.status == "open")))
        assert proposals
        for p in proposals:
            members = [s.get(Memory, m).statement for m in p.members]
            assert len(p.proposed_statement) < len(" ".join(members)), p.proposed_statement
            assert not MARKUP.search(p.proposed_statement), p.proposed_statement


def test_rerun_updates_an_open_proposal_once(demo_copy):
    now = parse_time("2026-12-03T12:00:00Z")
    with Session(demo_copy) as s:
        p = s.exec(select(CompactionProposal).where(CompactionProposal.status == "open")).first()
        pid, fresh = p.proposal_id, p.proposed_statement
        p.proposed_statement = "RuleRegistry: an old text; joined; with [bold]markup[/bold]."
        s.add(p)
        s.commit()
    first = propose_compactions(demo_copy, now)
    assert first.updated == 1
    assert next(r for r in compaction_records(demo_copy) if r["proposalId"] == pid)["proposedStatement"] == fresh
    assert propose_compactions(demo_copy, now).updated == 0

"""Span mapping through zero-context hunks (pure functions, hand-made hunks)."""

from __future__ import annotations

import hashlib
import random

import pytest

from memtui.domain.spans import (Hunk, diff_hunks, find_block, map_span, parse_hunk_header,
                                 span_hash, split_lines)


def H(a, b, c, d):  # noqa: N802 - reads like git's header
    return Hunk(a, b, c, d)


# --- hunk headers -------------------------------------------------------------------------------

@pytest.mark.parametrize("header, hunk", [
    ("@@ -43 +44,5 @@ public class RuleRegistry {", H(43, 1, 44, 5)),
    ("@@ -2,0 +3 @@ package com.acme.order.validation;", H(2, 0, 3, 1)),
    ("@@ -12,2 +11,0 @@ the payment.", H(12, 2, 11, 0)),
    ("@@ -0,0 +1,3 @@", H(0, 0, 1, 3)),
    (b"@@ -7,3 +7,3 @@", H(7, 3, 7, 3)),
])
def test_parse_hunk_header(header, hunk):
    assert parse_hunk_header(header) == hunk


def test_parse_hunk_header_rejects_other_lines():
    with pytest.raises(ValueError):
        parse_hunk_header("+@@ -1 +1 @@")


def test_hunk_header_round_trip():
    for h in (H(43, 1, 44, 5), H(2, 0, 3, 1), H(12, 2, 11, 0)):
        assert parse_hunk_header(h.header) == h


# --- map_span: span [10, 20] ------------------------------------------------------------------

def test_no_hunks_is_unchanged():
    m = map_span(10, 20, [])
    assert (m.status, m.start, m.end) == ("unchanged", 10, 20)


def test_change_before_with_same_length_keeps_lines():
    m = map_span(10, 20, [H(3, 2, 3, 2)])
    assert (m.status, m.start, m.end) == ("unchanged", 10, 20)


def test_change_before_growing_shifts_down():
    m = map_span(10, 20, [H(3, 1, 3, 4)])          # one line became four
    assert (m.status, m.start, m.end) == ("shifted", 13, 23)


def test_change_after_is_unchanged():
    m = map_span(10, 20, [H(25, 3, 25, 1), H(40, 0, 38, 7)])
    assert (m.status, m.start, m.end) == ("unchanged", 10, 20)


def test_overlapping_start_is_touched():
    m = map_span(10, 20, [H(8, 3, 8, 3)])           # old lines 8..10
    assert m.status == "touched" and m.start is None and m.end is None
    assert m.hunks == (H(8, 3, 8, 3),)


def test_overlapping_end_is_touched():
    m = map_span(10, 20, [H(20, 4, 20, 1)])         # old lines 20..23
    assert m.touched and m.hunks == (H(20, 4, 20, 1),)


def test_inside_is_touched():
    m = map_span(10, 20, [H(15, 1, 15, 1)])
    assert m.touched


def test_hunk_covering_whole_span_is_touched():
    m = map_span(10, 20, [H(5, 30, 5, 2)])
    assert m.touched


def test_exactly_adjacent_above_is_not_touched():
    m = map_span(10, 20, [H(7, 3, 7, 1)])           # old lines 7..9 -> one line
    assert (m.status, m.start, m.end) == ("shifted", 8, 18)


def test_exactly_adjacent_below_is_not_touched():
    m = map_span(10, 20, [H(21, 2, 21, 0)])         # old lines 21..22 deleted
    assert (m.status, m.start, m.end) == ("unchanged", 10, 20)


def test_at_file_start():
    assert map_span(1, 3, [H(0, 0, 1, 2)]).status == "shifted"     # insertion at the top
    assert (map_span(1, 3, [H(0, 0, 1, 2)]).start, map_span(1, 3, [H(0, 0, 1, 2)]).end) == (3, 5)
    assert map_span(1, 3, [H(1, 1, 1, 1)]).touched                  # first line changed
    assert map_span(2, 3, [H(1, 1, 1, 0)]).status == "shifted"      # first line deleted
    assert (map_span(2, 3, [H(1, 1, 1, 0)]).start, map_span(2, 3, [H(1, 1, 1, 0)]).end) == (1, 2)


def test_at_file_end():
    # a 10-line file: lines appended after line 10 do not touch a span ending at line 10
    m = map_span(8, 10, [H(10, 0, 11, 4)])
    assert (m.status, m.start, m.end) == ("unchanged", 8, 10)
    # the last line changed
    assert map_span(8, 10, [H(10, 1, 10, 1)]).touched


def test_pure_insertion_above():
    m = map_span(10, 20, [H(4, 0, 5, 3)])           # 3 lines after old line 4
    assert (m.status, m.start, m.end) == ("shifted", 13, 23)


def test_pure_insertion_directly_above_first_line():
    m = map_span(10, 20, [H(9, 0, 10, 2)])          # after old line 9 = before line 10
    assert (m.status, m.start, m.end) == ("shifted", 12, 22)


def test_pure_insertion_directly_below_last_line():
    m = map_span(10, 20, [H(20, 0, 21, 5)])         # after old line 20
    assert (m.status, m.start, m.end) == ("unchanged", 10, 20)


def test_pure_insertion_below():
    assert map_span(10, 20, [H(30, 0, 31, 5)]).status == "unchanged"


def test_pure_insertion_inside():
    assert map_span(10, 20, [H(10, 0, 11, 1)]).touched   # between lines 10 and 11
    assert map_span(10, 20, [H(19, 0, 20, 2)]).touched   # between lines 19 and 20


def test_single_line_span_with_insertions_around():
    assert map_span(5, 5, [H(5, 0, 6, 1)]).status == "unchanged"
    m = map_span(5, 5, [H(4, 0, 5, 1)])
    assert (m.status, m.start, m.end) == ("shifted", 6, 6)


def test_pure_deletion_above_shifts_up():
    m = map_span(10, 20, [H(2, 4, 1, 0)])           # old lines 2..5 deleted
    assert (m.status, m.start, m.end) == ("shifted", 6, 16)


def test_pure_deletion_inside_is_touched():
    m = map_span(10, 20, [H(12, 2, 11, 0)])
    assert m.touched and m.region == (10, 18)


def test_multiple_hunks_accumulate():
    hunks = [H(1, 0, 1, 2),     # +2 (insert at the top)
             H(3, 2, 5, 5),     # +3 (old 3..4 -> 5 lines)
             H(6, 1, 10, 0),    # -1 (old 6 deleted)
             H(25, 1, 29, 1)]   # after the span: no effect
    m = map_span(10, 20, hunks)
    assert (m.status, m.start, m.end) == ("shifted", 14, 24)
    # order of the list does not matter
    assert map_span(10, 20, list(reversed(hunks))) == m


def test_shifts_cancelling_out_is_unchanged():
    m = map_span(10, 20, [H(2, 0, 3, 2), H(5, 2, 7, 0)])
    assert (m.status, m.start, m.end) == ("unchanged", 10, 20)


def test_touched_region_covers_the_replacement():
    m = map_span(10, 20, [H(2, 0, 3, 2), H(15, 2, 17, 5)])
    assert m.touched and m.region == (12, 25)


@pytest.mark.parametrize("start, end", [(0, 3), (5, 4), (-1, 2)])
def test_invalid_span_raises(start, end):
    with pytest.raises(ValueError):
        map_span(start, end, [])


def test_untouched_spans_keep_their_text_under_random_edits():
    """Property: for any edit, a span the hunks do not touch has the same text at its new lines."""
    rng = random.Random(12)
    for _ in range(200):
        old = [f"line {rng.randint(0, 30)}\n" for _ in range(rng.randint(1, 40))]
        new = list(old)
        for _ in range(rng.randint(1, 4)):
            op, pos = rng.random(), rng.randint(0, len(new))
            if op < 0.4:
                new[pos:pos] = [f"ins {rng.randint(0, 9)}\n" for _ in range(rng.randint(1, 3))]
            elif op < 0.7 and new:
                del new[min(pos, len(new) - 1)]
            elif new:
                new[min(pos, len(new) - 1)] = "changed\n"
        hunks = diff_hunks(old, new)
        for s in range(1, len(old) + 1):
            for e in range(s, min(len(old), s + 6) + 1):
                m = map_span(s, e, hunks)
                if not m.touched:
                    assert new[m.start - 1:m.end] == old[s - 1:e], (old, new, s, e, hunks)


def test_diff_hunks_use_git_header_semantics():
    old = ["a\n", "b\n", "c\n", "d\n"]
    assert diff_hunks(old, old) == []
    assert diff_hunks(old, ["a\n", "x\n", "b\n", "c\n", "d\n"]) == [H(1, 0, 2, 1)]   # insertion
    assert diff_hunks(old, ["a\n", "c\n", "d\n"]) == [H(2, 1, 1, 0)]                 # deletion
    assert diff_hunks(old, ["a\n", "B\n", "c\n", "d\n"]) == [H(2, 1, 2, 1)]          # change
    assert diff_hunks(old, ["z\n"] + old) == [H(0, 0, 1, 1)]                         # at the top


# --- find_block ---------------------------------------------------------------------------------

def test_find_block_unique_match():
    new = ["x\n", "def f():\n", "    return 1\n", "y\n"]
    assert find_block(["def f():\n", "    return 1\n"], new) == (2, 3)


def test_find_block_ignores_a_missing_final_newline():
    assert find_block(["a", "b"], ["q\n", "a\n", "b"]) == (2, 3)


def test_find_block_absent():
    assert find_block(["def f():\n", "    return 2\n"], ["def f():\n", "    return 1\n"]) is None


def test_find_block_ambiguous_is_none():
    new = ["a\n", "b\n", "x\n", "a\n", "b\n"]
    assert find_block(["a\n", "b\n"], new) is None


def test_find_block_empty_or_blank_is_none():
    assert find_block([], ["a\n"]) is None
    assert find_block(["\n", "   \n"], ["a\n", "\n", "   \n"]) is None


def test_find_block_at_edges():
    new = ["a\n", "b\n", "c\n"]
    assert find_block(["a\n"], new) == (1, 1)
    assert find_block(["b\n", "c\n"], new) == (2, 3)
    assert find_block(["c\n", "d\n"], new) is None


# --- span_hash / split_lines --------------------------------------------------------------------

def test_span_hash_matches_hashlib():
    lines = ["public class RuleRegistry {\n", "\n", "    private int x;\n"]
    expected = "sha256:" + hashlib.sha256(b"public class RuleRegistry {\n\n    private int x;\n").hexdigest()
    assert span_hash(lines) == expected
    # lines given without their newline hash the same
    assert span_hash([x.rstrip("\n") for x in lines]) == expected
    # bytes lines too
    assert span_hash([x.encode() for x in lines]) == expected


def test_span_hash_of_non_ascii_and_empty():
    assert span_hash(["größe = 1"]) == "sha256:" + hashlib.sha256("größe = 1\n".encode()).hexdigest()
    assert span_hash([]) == "sha256:" + hashlib.sha256(b"").hexdigest()


def test_span_hash_keeps_carriage_returns():
    assert span_hash(["a\r\n"]) == "sha256:" + hashlib.sha256(b"a\r\n").hexdigest()


def test_split_lines_counts_like_git():
    assert split_lines("") == []
    assert split_lines("a\nb\n") == ["a\n", "b\n"]
    assert split_lines("a\nb") == ["a\n", "b"]
    assert split_lines("a\r\nb\x0cc\n") == ["a\r\n", "b\x0cc\n"]   # only "\n" ends a line

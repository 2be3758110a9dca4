"""Revalidation against real git repositories built in the test, and the sample bundle.

Expected values are computed independently of the code under test: by reading files with
``git show`` or from the working tree and locating text with plain Python.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from memtui.revalidation.engine import EvidenceRef, revalidate
from memtui.sources.gitdiff import GitRepo
from memtui.sources.symbols import SymbolIndex, calls_in, find_symbol

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"

from tests.gitrepo import git


class Repo:
    """A throwaway repository: write files, commit, move, delete."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        git(path, "init", "-q", "-b", "main")

    def write(self, rel: str, text: str) -> None:
        f = self.path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)

    def read(self, rel: str) -> str:
        return (self.path / rel).read_text()

    def mv(self, src: str, dst: str) -> None:
        (self.path / dst).parent.mkdir(parents=True, exist_ok=True)
        git(self.path, "mv", src, dst)

    def rm(self, rel: str) -> None:
        git(self.path, "rm", "-q", rel)

    def commit(self, msg: str = "change") -> str:
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "--no-gpg-sign", "-m", msg)
        return git(self.path, "rev-parse", "HEAD").strip()

    def show(self, commit: str, rel: str) -> str:
        return git(self.path, "show", f"{commit}:{rel}")


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def sha(lines: list[str]) -> str:
    return "sha256:" + hashlib.sha256("".join(lines).encode()).hexdigest()


def locate(block: list[str], text: str) -> tuple[int, int]:
    """1-based inclusive lines of the only occurrence of ``block`` in ``text`` (test helper)."""
    lines = lines_of(text)
    hits = [i for i in range(len(lines) - len(block) + 1) if lines[i:i + len(block)] == block]
    assert len(hits) == 1, hits
    return hits[0] + 1, hits[0] + len(block)


def span_ev(eid, mid, path, commit, start, end, text, type_="file_span", **kw) -> EvidenceRef:
    block = lines_of(text)[start - 1:end]
    return EvidenceRef(eid, mid, type_, path, commit, start, end, span_hash=sha(block), **kw)


PLAIN = "".join(f"value_{i} = {i * 7}\n" for i in range(1, 41))   # 40 distinct lines

JAVA = """package com.example;

public class Registry {

    private final java.util.Map<String, String> rules = new java.util.HashMap<>();

    public void register(String id, String rule) {
        rules.put(id, rule);
    }

    public String resolve(String id) {
        String rule = rules.get(id);
        return rule;
    }

    public int size() {
        return rules.size();
    }
}
"""

CALLER = """package com.example;

public class Validator {

    private final Registry registry = new Registry();

    public boolean validate(String id) {
        String rule = registry.resolve(id);
        return rule != null;
    }
}
"""


def by_id(result):
    return {c.evidence_id: c for c in result.checks}, {v.memory_id: v for v in result.verdicts}


# --- file spans ---------------------------------------------------------------------------------

def test_untouched_span_is_valid_at_shifted_lines(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("cfg.py", PLAIN)
    c1 = r.commit()
    r.write("cfg.py", "# header\n# more\n# and more\n" + PLAIN.replace("value_35 = 245", "value_35 = 0"))
    head = r.commit()
    checks, verdicts = by_id(revalidate([span_ev(1, "m", "cfg.py", c1, 20, 25, PLAIN)], {}, GitRepo(r.path)))
    expected = locate(lines_of(PLAIN)[19:25], r.read("cfg.py"))
    assert expected == (23, 28)
    c = checks[1]
    assert (c.status, c.reason_code, c.severity) == ("valid", "shifted", "none")
    assert (c.current_path, c.current_line_start, c.current_line_end) == ("cfg.py", *expected)
    assert c.current_commit == head
    v = verdicts["m"]
    assert (v.outcome, v.reasons, v.severity) == ("keep", [], "none")
    assert v.current_evidence == [f"cfg.py@{head[:7]}"]


def test_touched_span_is_changed_and_sends_memory_to_review(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("cfg.py", PLAIN)
    c1 = r.commit()
    r.write("cfg.py", PLAIN.replace("value_22 = 154", "value_22 = 999"))
    r.commit()
    checks, verdicts = by_id(revalidate([span_ev(1, "m", "cfg.py", c1, 20, 25, PLAIN)], {}, GitRepo(r.path)))
    assert (checks[1].status, checks[1].reason_code, checks[1].severity) == ("changed", "span_changed", "medium")
    assert "cfg.py" in checks[1].reason and c1[:7] in checks[1].reason
    v = verdicts["m"]
    assert v.outcome == "needs_review" and v.reason_codes == ["span_changed"]
    assert any("cfg.py" in reason for reason in v.reasons)


def test_hash_mismatch_is_changed(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("cfg.py", PLAIN)
    c1 = r.commit()
    bad = EvidenceRef(1, "m", "file_span", "cfg.py", c1, 3, 4, span_hash=sha(["not the text\n"]))
    checks, verdicts = by_id(revalidate([bad], {}, GitRepo(r.path)))
    assert (checks[1].status, checks[1].reason_code) == ("changed", "hash_mismatch")
    assert verdicts["m"].outcome == "needs_review"


def test_renamed_file_unchanged_is_valid_at_new_path(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("old/cfg.py", PLAIN)
    c1 = r.commit()
    r.mv("old/cfg.py", "new/settings.py")
    r.commit()
    checks, verdicts = by_id(revalidate([span_ev(1, "m", "old/cfg.py", c1, 5, 9, PLAIN)], {}, GitRepo(r.path)))
    c = checks[1]
    assert (c.status, c.reason_code, c.current_path) == ("valid", "renamed", "new/settings.py")
    assert (c.current_line_start, c.current_line_end) == locate(lines_of(PLAIN)[4:9], r.read("new/settings.py"))
    assert verdicts["m"].outcome == "keep"


def test_renamed_and_changed_span_is_changed(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("old/cfg.py", PLAIN)
    c1 = r.commit()
    r.mv("old/cfg.py", "new/settings.py")
    r.write("new/settings.py", PLAIN.replace("value_7 = 49", "value_7 = 50"))
    r.commit()
    assert "R" in git(r.path, "diff", "--name-status", "-M", c1, "HEAD")   # git sees a rename
    ev = [span_ev(1, "m", "old/cfg.py", c1, 5, 9, PLAIN), span_ev(2, "m", "old/cfg.py", c1, 30, 32, PLAIN)]
    checks, verdicts = by_id(revalidate(ev, {}, GitRepo(r.path)))
    assert (checks[1].status, checks[1].reason_code, checks[1].current_path) == ("changed", "span_changed", "new/settings.py")
    assert "renamed to new/settings.py" in checks[1].reason
    assert (checks[2].status, checks[2].reason_code) == ("valid", "renamed")
    assert verdicts["m"].outcome == "needs_review"


def test_moved_block_is_valid_at_new_lines(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("cfg.py", PLAIN)
    c1 = r.commit()
    lines = lines_of(PLAIN)
    block = lines[4:9]                                  # lines 5..9
    r.write("cfg.py", "".join(lines[:4] + lines[9:30] + block + lines[30:]))
    r.commit()
    checks, verdicts = by_id(revalidate([span_ev(1, "m", "cfg.py", c1, 5, 9, PLAIN)], {}, GitRepo(r.path)))
    c = checks[1]
    assert (c.status, c.reason_code) == ("valid", "moved")
    assert (c.current_line_start, c.current_line_end) == locate(block, r.read("cfg.py")) == (26, 30)
    assert verdicts["m"].outcome == "keep"


def test_deleted_file_and_all_evidence_deleted_invalidates(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("a.py", PLAIN)
    r.write("docs/b.md", "# B\n\nsome text\nmore\n")
    r.write("keep.py", PLAIN)
    c1 = r.commit()
    r.rm("a.py")
    r.rm("docs/b.md")
    r.commit()
    ev = [span_ev(1, "gone", "a.py", c1, 1, 3, PLAIN),
          span_ev(2, "gone", "docs/b.md", c1, 3, 4, "# B\n\nsome text\nmore\n", type_="doc"),
          span_ev(3, "half", "a.py", c1, 1, 3, PLAIN),
          span_ev(4, "half", "keep.py", c1, 1, 3, PLAIN),
          span_ev(5, "vouched", "a.py", c1, 1, 3, PLAIN),
          EvidenceRef(6, "vouched", "human", ref="reviewer:dana")]
    checks, verdicts = by_id(revalidate(ev, {}, GitRepo(r.path)))
    assert (checks[1].status, checks[1].reason_code, checks[1].severity) == ("deleted", "file_deleted", "high")
    assert checks[1].current_path is None and checks[1].current_line_start is None
    assert (checks[6].status, checks[6].reason_code) == ("unchecked", "not_checkable")
    gone = verdicts["gone"]
    assert (gone.outcome, gone.reason_codes[0], gone.severity) == ("invalidate", "all_evidence_deleted", "high")
    assert gone.current_evidence == []
    # one piece left, or a human source: review, not invalidation
    assert verdicts["half"].outcome == "needs_review"
    assert verdicts["half"].severity == "high"
    assert verdicts["vouched"].outcome == "needs_review"
    assert "all_evidence_deleted" not in verdicts["vouched"].reason_codes


def test_human_only_memory_is_kept_unchecked(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("a.py", PLAIN)
    r.commit()
    checks, verdicts = by_id(revalidate([EvidenceRef(1, "m", "replay", ref="eval:x")], {}, GitRepo(r.path)))
    assert checks[1].status == "unchecked"
    assert verdicts["m"].outcome == "keep"


# --- symbols and call edges (Java) --------------------------------------------------------------

def java_repo(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("src/com/example/Registry.java", JAVA)
    r.write("src/com/example/Validator.java", CALLER)
    return r, r.commit()


def test_symbol_deleted_is_high_severity(tmp_path):
    r, c1 = java_repo(tmp_path)
    path = "src/com/example/Registry.java"
    r.write(path, JAVA.replace("""    public String resolve(String id) {
        String rule = rules.get(id);
        return rule;
    }

""", ""))
    r.commit()
    start, end = locate(lines_of(JAVA)[10:14], JAVA)          # resolve at the old commit
    ev = [EvidenceRef(1, "m", "symbol", path, c1, start, end, symbol="Registry.resolve",
                      span_hash=sha(lines_of(JAVA)[start - 1:end])),
          EvidenceRef(2, "m", "symbol", path, c1, symbol="Registry.size")]
    checks, verdicts = by_id(revalidate(ev, {}, GitRepo(r.path)))
    c = checks[1]
    assert (c.status, c.reason_code, c.severity) == ("deleted", "referenced_symbol_deleted", "high")
    assert "Registry.resolve" in c.reason
    assert checks[2].status == "valid"
    v = verdicts["m"]
    assert (v.outcome, v.severity) == ("needs_review", "high")
    assert "referenced_symbol_deleted" in v.reason_codes


def test_symbol_body_changed_and_unchanged_symbol_shifted(tmp_path):
    r, c1 = java_repo(tmp_path)
    path = "src/com/example/Registry.java"
    new = JAVA.replace("return rule;", "return rule == null ? \"\" : rule;").replace(
        "public class Registry {\n", "public class Registry {\n\n    // a comment\n")
    r.write(path, new)
    r.commit()
    ev = [EvidenceRef(1, "m", "symbol", path, c1, 11, 14, symbol="Registry.resolve"),
          EvidenceRef(2, "m", "symbol", path, c1, 16, 18, symbol="Registry.size")]
    checks, verdicts = by_id(revalidate(ev, {}, GitRepo(r.path)))
    assert (checks[1].status, checks[1].reason_code) == ("changed", "symbol_changed")
    assert checks[1].reason == f"Grounding symbol Registry.resolve changed since {c1[:7]}"
    size_at_head = locate(["    public int size() {\n", "        return rules.size();\n", "    }\n"], new)
    assert (checks[2].status, checks[2].reason_code) == ("valid", "shifted")
    assert (checks[2].current_line_start, checks[2].current_line_end) == size_at_head
    assert verdicts["m"].outcome == "needs_review"


def test_call_edge_removed_and_caller_deleted(tmp_path):
    r, c1 = java_repo(tmp_path)
    path = "src/com/example/Validator.java"
    line = CALLER.splitlines().index("        String rule = registry.resolve(id);") + 1
    r.write(path, CALLER.replace("registry.resolve(id)", "id.trim()"))
    r.commit()
    ev = [EvidenceRef(1, "edge", "call_edge", path, c1, line, line, symbol="Validator.validate",
                      target="Registry.resolve"),
          EvidenceRef(2, "gone", "call_edge", path, c1, symbol="Validator.audit", target="Registry.resolve")]
    checks, verdicts = by_id(revalidate(ev, {}, GitRepo(r.path)))
    assert (checks[1].status, checks[1].reason_code) == ("changed", "edge_removed")
    assert "Validator.validate" in checks[1].reason and "Registry.resolve" in checks[1].reason
    assert verdicts["edge"].outcome == "needs_review"
    # a caller that is not there: the edge is gone
    assert (checks[2].status, checks[2].reason_code, checks[2].severity) == (
        "deleted", "referenced_symbol_deleted", "high")


def test_call_edge_kept_when_call_moves(tmp_path):
    r, c1 = java_repo(tmp_path)
    path = "src/com/example/Validator.java"
    line = CALLER.splitlines().index("        String rule = registry.resolve(id);") + 1
    r.write(path, CALLER.replace("        String rule = registry.resolve(id);",
                                 "        // look the rule up\n        String rule = registry.resolve(id.trim());"))
    r.commit()
    ev = [EvidenceRef(1, "m", "call_edge", path, c1, line, line, symbol="Validator.validate",
                      target="Registry.resolve")]
    checks, verdicts = by_id(revalidate(ev, {}, GitRepo(r.path)))
    expected = r.read(path).splitlines().index("        String rule = registry.resolve(id.trim());") + 1
    assert checks[1].status == "valid"
    assert (checks[1].current_line_start, checks[1].current_line_end) == (expected, expected)
    assert verdicts["m"].outcome == "keep"


# --- policies -----------------------------------------------------------------------------------

def test_invalidation_policies_add_reasons(tmp_path):
    r, c1 = java_repo(tmp_path)
    r.write("docs/adr.md", "# ADR-1\n\nStatus: accepted\n\nUse the registry.\n")
    r.write("docs/old.md", "# Old\n\nStatus: superseded by ADR-1\n")
    c1 = r.commit()
    reg, val = "src/com/example/Registry.java", "src/com/example/Validator.java"
    r.write(reg, JAVA.replace("return rules.size();", "return rules.size() + 0;"))
    r.write(val, CALLER.replace("registry.resolve(id)", "id.trim()"))
    r.write("docs/adr.md", "# ADR-1\n\nStatus: Superseded by ADR-2\n\nUse the registry.\n")
    r.write("docs/old.md", "# Old\n\nStatus: superseded by ADR-1 (still)\n")
    r.commit()
    ev = [EvidenceRef(1, "m", "file_span", reg, c1, 1, 1, span_hash=sha(["package com.example;\n"])),
          EvidenceRef(2, "m", "file_span", val, c1, 1, 1, span_hash=sha(["package com.example;\n"])),
          EvidenceRef(3, "m", "adr", "docs/adr.md", c1, 1, 1, span_hash=sha(["# ADR-1\n"])),
          EvidenceRef(4, "quiet", "doc", "docs/old.md", c1, 1, 1, span_hash=sha(["# Old\n"]))]
    policies = {"m": [{"symbolChanged": "Registry.size"}, {"symbolChanged": "Registry.register"},
                      {"fileChanged": reg}, {"edgeRemoved": "Validator.validate CALLS Registry.resolve"},
                      {"docSuperseded": "docs/adr.md"}],
                "quiet": [{"docSuperseded": "docs/old.md"}, {"fileChanged": "docs/never-there.md"}]}
    checks, verdicts = by_id(revalidate(ev, policies, GitRepo(r.path)))
    # the spans themselves hold; the ADR cited as evidence is now marked superseded (issue 3, item 2)
    assert all(c.status == "valid" for i, c in checks.items() if i != 3)
    assert (checks[3].status, checks[3].reason_code) == ("changed", "doc_superseded")
    v = verdicts["m"]
    assert v.outcome == "needs_review"
    assert v.reason_codes == ["doc_superseded", "policy_doc_superseded", "policy_edge_removed",
                              "policy_file_changed", "policy_symbol_changed"]
    assert any("Registry.size" in x for x in v.reasons)
    assert not any("Registry.register" in x for x in v.reasons)   # unchanged symbol: no reason
    assert any("docs/adr.md" in x and "superseded" in x for x in v.reasons)
    assert any("Validator.validate" in x and "Registry.resolve" in x for x in v.reasons)
    # already superseded before, and a policy path that never existed: nothing fires
    assert verdicts["quiet"].outcome == "keep"


def test_doc_superseded_by_deletion(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("docs/legacy.md", "# Legacy\n\nHow it works.\n")
    r.write("src/a.py", PLAIN)
    c1 = r.commit()
    r.rm("docs/legacy.md")
    r.commit()
    ev = [span_ev(1, "m", "src/a.py", c1, 1, 2, PLAIN)]
    _, verdicts = by_id(revalidate(ev, {"m": [{"docSuperseded": "docs/legacy.md"}]}, GitRepo(r.path)))
    assert verdicts["m"].outcome == "needs_review"
    assert verdicts["m"].reason_codes == ["policy_doc_superseded"]


# --- unknown commits, process budget, determinism -----------------------------------------------

def test_unknown_commit_is_unverifiable_not_an_error(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("cfg.py", PLAIN)
    c1 = r.commit()
    ev = [EvidenceRef(1, "m", "file_span", "cfg.py", "0" * 39 + "1", 1, 2),
          EvidenceRef(2, "m", "file_span", "cfg.py", "not a sha", 1, 2),
          EvidenceRef(3, "ok", "file_span", "cfg.py", c1, 1, 2),
          EvidenceRef(4, "ok", "file_span", "missing.py", c1, 1, 2)]
    checks, verdicts = by_id(revalidate(ev, {"m": [{"fileChanged": "cfg.py"}]}, GitRepo(r.path)))
    for eid in (1, 2):
        assert (checks[eid].status, checks[eid].reason_code) == ("unverifiable", "commit_unknown")
        assert "cfg.py" in checks[eid].reason
    assert verdicts["m"].outcome == "needs_review" and verdicts["m"].reason_codes == ["commit_unknown"]
    assert checks[3].status == "valid"
    assert (checks[4].status, checks[4].reason_code) == ("unverifiable", "path_unknown")


def test_commit_missing_from_shallow_clone_is_unverifiable(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("cfg.py", PLAIN)
    c1 = r.commit()
    r.write("cfg.py", "# top\n" + PLAIN)
    r.commit()
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{r.path}", str(shallow))
    repo = GitRepo(shallow)
    assert not repo.has_commit(c1)
    checks, verdicts = by_id(revalidate([span_ev(1, "m", "cfg.py", c1, 3, 4, PLAIN)], {}, repo))
    assert (checks[1].status, checks[1].reason_code) == ("unverifiable", "commit_unknown")
    assert verdicts["m"].outcome == "needs_review"


def test_not_a_checkout_raises_git_error(tmp_path):
    from memtui.sources.gitdiff import GitError

    with pytest.raises(GitError):
        revalidate([], {}, GitRepo(tmp_path))


def test_git_processes_do_not_grow_with_evidence(tmp_path):
    r = Repo(tmp_path / "r")
    for i in range(5):
        r.write(f"f{i}.py", PLAIN)
    c1 = r.commit()
    for i in range(5):
        r.write(f"f{i}.py", f"# edit {i}\n" + PLAIN.replace(f"value_{30 + i} ", f"value_{30 + i}_x "))
    c2 = r.commit()
    r.write("f0.py", "# again\n" + r.read("f0.py"))
    r.commit()

    def evidence(n):
        out = []
        for k in range(n):
            commit = (c1, c2)[k % 2]
            text = git(r.path, "show", f"{commit}:f{k % 5}.py")
            start = 1 + k % 30
            out.append(span_ev(k, f"mem{k}", f"f{k % 5}.py", commit, start, start + 3, text))
        return out

    counts = []
    for n in (50, 200):
        repo = GitRepo(r.path)
        result = revalidate(evidence(n), {}, repo)
        assert len(result.checks) == n
        counts.append(repo.git_processes)
    assert counts[1] == counts[0]          # 200 evidence rows cost what 50 do
    assert counts[0] <= 6                  # head, batch-check, 2 hunk processes, cat-file --batch


def test_same_input_same_output_in_any_order(tmp_path):
    r, c1 = java_repo(tmp_path)
    r.write("src/com/example/Registry.java", JAVA.replace("return rule;", "return rule.trim();"))
    r.commit()
    ev = [EvidenceRef(i, f"m{i % 3}", t, "src/com/example/Registry.java", c1, 11, 14, symbol=s)
          for i, (t, s) in enumerate([("symbol", "Registry.resolve"), ("file_span", None),
                                      ("symbol", "Registry.size"), ("symbol", "Registry.register")])]
    pol = {"m0": [{"symbolChanged": "Registry"}]}
    a = revalidate(ev, pol, GitRepo(r.path))
    b = revalidate(list(reversed(ev)), pol, GitRepo(r.path))
    c = revalidate(ev, pol, GitRepo(r.path), hunks="python")
    assert a.checks == b.checks == c.checks and a.verdicts == b.verdicts == c.verdicts
    assert [x.memory_id for x in a.verdicts] == sorted(x.memory_id for x in a.verdicts)


def test_diff_since_matches_git_diff_output(tmp_path):
    r = Repo(tmp_path / "r")
    r.write("a.py", PLAIN)
    r.write("b.py", PLAIN)
    c1 = r.commit()
    r.write("a.py", "# top\n" + PLAIN.replace("value_20 = 140\n", "").replace("value_30", "v30"))
    r.mv("b.py", "c.py")
    r.commit()
    diff = GitRepo(r.path).diff_since(c1)
    expected = [line.split(" @@")[0] + " @@" for line in git(r.path, "diff", "-U0", c1, "HEAD", "--", "a.py").splitlines()
                if line.startswith("@@ ")]
    assert [h.header for h in diff.change_for("a.py").hunks] == expected
    renamed = diff.change_for("b.py")
    assert (renamed.status, renamed.new_path, renamed.hunks) == ("R", "c.py", ())
    blobs = GitRepo(r.path).read_blobs([(c1, "a.py"), (c1, "nope.py"), ("f" * 40, "a.py")])
    assert blobs[(c1, "a.py")].text == PLAIN
    assert blobs[(c1, "a.py")].oid == git(r.path, "rev-parse", f"{c1}:a.py").strip()
    assert blobs[(c1, "nope.py")] is None and blobs[("f" * 40, "a.py")] is None


# --- symbol lookup -----------------------------------------------------------------------------

def test_find_symbol_and_calls_in_java_and_python():
    span = find_symbol(JAVA, "Registry.java", "Registry.resolve")
    lines = JAVA.splitlines(keepends=True)
    start = next(i for i, x in enumerate(lines) if "public String resolve" in x) + 1
    assert (span.start_line, span.end_line) == (start, start + 3)
    assert span.text == "".join(lines[start - 1:start + 3])
    assert find_symbol(JAVA, "Registry.java", "Registry").start_line == 3
    assert find_symbol(JAVA, "Registry.java", "com.example.Registry.size") is not None
    assert find_symbol(JAVA, "Registry.java", "Registry.missing") is None
    assert {"resolve", "registry.resolve"} <= calls_in(CALLER, "Validator.java", "Validator.validate")
    py = "import os\n\nclass A:\n    @property\n    def f(self):\n        return os.path.join(self.g(), 'x')\n\ndef top():\n    return A().f\n"
    f = find_symbol(py, "m.py", "A.f")
    assert (f.start_line, f.end_line) == (4, 6)                 # decorator included
    assert {"join", "os.path.join", "g", "self.g"} <= calls_in(py, "m.py", "A.f")
    assert find_symbol(py, "m.py", "top").start_line == 8
    assert find_symbol(py, "notes.txt", "top") is None          # unsupported language
    index = SymbolIndex()
    index.find_symbol(JAVA, "R.java", "Registry", key="blob1")
    index.find_symbol(JAVA, "R.java", "Registry.size", key="blob1")
    assert index.parses == 1                                     # cached by blob id


# --- the seed exercise on the sample repository -------------------------------------------------

@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    dest = tmp_path_factory.mktemp("sample") / "order-service"
    git(ROOT, "clone", "-q", str(SAMPLE / "order-service.bundle"), str(dest))
    data = yaml.safe_load((SAMPLE / "memories.yaml").read_text())
    evidence, policies = [], {}
    for m in data["memories"]:
        for i, e in enumerate(m.get("evidence") or []):
            start, end = (e.get("lines") or [None, None])
            evidence.append(EvidenceRef(f"{m['memoryId']}#{i}", m["memoryId"], e["type"], e.get("path"),
                                        e.get("commitSha"), start, end, e.get("symbol"), e.get("target"),
                                        e.get("spanHash"), e.get("ref")))
        if m.get("invalidationPolicy"):
            policies[m["memoryId"]] = m["invalidationPolicy"]
    repo = GitRepo(dest)
    result = revalidate(evidence, policies, repo)
    return dest, data, result, repo


def test_sample_rule_registry_convention_needs_review(sample):
    dest, _, result, _ = sample
    v = {x.memory_id: x for x in result.verdicts}["mem_rule_registry_convention"]
    assert v.outcome == "needs_review"
    assert "symbol_changed" in v.reason_codes
    assert any("RuleRegistry.resolve" in reason for reason in v.reasons)
    head = git(dest, "rev-parse", "HEAD").strip()
    assert f"RuleRegistry.java@{head[:7]}" in v.current_evidence


def test_sample_old_rule_engine_invalidated(sample):
    _, _, result, _ = sample
    v = {x.memory_id: x for x in result.verdicts}["mem_old_rule_engine"]
    assert (v.outcome, v.reason_codes[0], v.severity) == ("invalidate", "all_evidence_deleted", "high")
    checks = [c for c in result.checks if c.memory_id == "mem_old_rule_engine"]
    assert checks and all(c.status == "deleted" for c in checks)


def test_sample_order_validator_entrypoint_kept_with_current_lines(sample):
    dest, data, result, _ = sample
    v = {x.memory_id: x for x in result.verdicts}["mem_order_validator_entrypoint"]
    assert (v.outcome, v.reasons) == ("keep", [])
    mem = next(m for m in data["memories"] if m["memoryId"] == "mem_order_validator_entrypoint")
    ev = mem["evidence"][0]
    old_block = lines_of(git(dest, "show", f"{ev['commitSha']}:{ev['path']}"))[ev["lines"][0] - 1:ev["lines"][1]]
    expected = locate(old_block, (dest / ev["path"]).read_text())
    check = next(c for c in result.checks if c.memory_id == "mem_order_validator_entrypoint")
    assert check.status == "valid"
    assert (check.current_line_start, check.current_line_end) == expected
    assert expected != tuple(ev["lines"])


def test_sample_uses_few_git_processes(sample):
    _, _, result, repo = sample
    assert result.stats["commits"] == 1
    assert result.stats["git_processes"] <= 6


def test_unusual_paths_spaces_unicode_and_quotes(tmp_path):
    r = Repo(tmp_path / "r")
    odd, moved = 'docs/my "notes" ü.md', "docs/new dir/tab\there.md"
    r.write(odd, PLAIN)
    r.write("src/main.py", PLAIN)
    c1 = r.commit()
    r.mv(odd, moved)
    r.write(moved, "# top\n" + PLAIN.replace("value_3 = 21", "value_3 = 22"))
    r.write("src/main.py", "# top\n" + PLAIN)
    r.commit()
    ev = [span_ev(1, "m", odd, c1, 10, 12, PLAIN), span_ev(2, "m", odd, c1, 2, 4, PLAIN),
          span_ev(3, "m", "src/main.py", c1, 1, 2, PLAIN)]
    from memtui.domain.spans import Hunk

    change = GitRepo(r.path).diff_since(c1, [odd]).change_for(odd)
    assert (change.status, change.new_path) == ("R", moved)
    assert change.hunks == (Hunk(0, 0, 1, 1), Hunk(3, 1, 4, 1))   # line added on top, line 3 edited
    for mode in ("git", "python"):
        checks, _ = by_id(revalidate(ev, {}, GitRepo(r.path), hunks=mode))
        assert (checks[1].status, checks[1].current_path) == ("valid", moved)
        assert (checks[1].current_line_start, checks[1].current_line_end) == (11, 13)
        assert (checks[2].status, checks[2].reason_code) == ("changed", "span_changed")
        assert (checks[3].status, checks[3].current_line_start) == ("valid", 2)


def test_adr_marked_superseded_sends_memory_to_review(tmp_path):
    """A doc/ADR cited as evidence that is later marked superseded is changed, though its lines are not."""
    import subprocess

    from memtui.revalidation.engine import EvidenceRef, revalidate
    from memtui.sources.gitdiff import GitRepo

    repo = tmp_path / "r"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def git(*args):
        return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    git("init", "-q", "-b", "main")
    adr = repo / "ADR-7.md"
    adr.write_text("# ADR 7: Use RuleRegistry\n\nStatus: accepted\n\nRules are registered centrally.\n")
    git("add", "."); git("commit", "-qm", "adr")
    first = git("rev-parse", "HEAD")
    adr.write_text("# ADR 7: Use RuleRegistry\n\nStatus: superseded by ADR 9\n\nRules are registered centrally.\n")
    git("commit", "-qam", "supersede")
    ev = EvidenceRef(1, "m", "adr", "ADR-7.md", first, 5, 5)
    out = revalidate([ev], {}, GitRepo(repo))
    check = out.checks[0]
    assert (check.status, check.reason_code) == ("changed", "doc_superseded")
    assert out.verdicts[0].outcome == "needs_review"

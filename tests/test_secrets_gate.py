"""The scanner's gate and the import's screening shortcut find what the full scan finds (issue 22, item 5).

The gate (:func:`memtui.safety.secrets._gate_kind`) decides which detectors a text needs; it must let
through every text a detector finds something in. Checked against the ungated detectors
(``_detect(text, 3)``: every detector on every text) on the labelled lines of ``bench/secrets.py``
(positives and real memory-file negatives of both splits), the unit tests' secrets, and generated
texts built from token shapes and cue fragments. :func:`memtui.safety.guard.screen_memory` skips the
step-by-step screening of a memory none of whose strings holds a secret; its result and rows are
compared with the step-by-step screening on records with secrets and personal data in every field.
"""

from __future__ import annotations

import copy
import importlib.util
import random
import string
from pathlib import Path

import pytest

from memtui.safety import guard, secrets
from memtui.store.rows import RowView

from tests.test_secrets import KINDS, PRIVATE_KEY

ROOT = Path(__file__).resolve().parent.parent


def _bench_secrets():
    spec = importlib.util.spec_from_file_location("bench_secrets", ROOT / "bench" / "secrets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generated(n: int, seed: int) -> list[str]:
    """Texts made of cue words, token shapes, near misses and filler, in random case and order."""
    rng = random.Random(seed)
    an = string.ascii_letters + string.digits

    def r(k: int, chars: str = an) -> str:
        return "".join(rng.choice(chars) for _ in range(k))

    shapes = [lambda: "SK" + r(32, string.ascii_lowercase + string.digits), lambda: "AP" + rng.choice("0123456789ABCDEF") + r(9),
              lambda: "AKC" + r(10), lambda: "AKIA" + r(16, string.ascii_uppercase + string.digits),
              lambda: "ASIA" + r(16, string.ascii_uppercase + string.digits), lambda: "ghp_" + r(36),
              lambda: "xoxb-" + r(5, string.digits) + "-" + r(6, string.ascii_lowercase), lambda: "sk_live_" + r(24),
              lambda: r(40, an + "+/"), lambda: r(32, "0123456789abcdef") + "-us7", lambda: f"{r(9, string.digits)}:" + r(35),
              lambda: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0." + r(20), lambda: "AccountKey=" + r(88, an + "+/"),
              lambda: "https://u:" + r(10) + "@db.example.org/x", lambda: PRIVATE_KEY, lambda: r(24, an + "_-")]
    fragments = ["password", "Pass", "pw", "pwd", "secret", "key", "api_key", "Token", "credentials", "login",
                 "bearer", "Authorization: Basic", "private", "PRIVATE KEY", "BEGIN RSA", "task", "api", "apply",
                 "ask", "desk", "skip", "apex", "APPROVED", "mysql -p", "curl -u bob:", "--password ", "Password=",
                 "?pwd=", "is", ":", "=", " = ", "'", '"', "hunter2-Staging", "Geheim123!", "swordfish", "the",
                 "src/auth/TokenCache.py", "wf_00012", " ", " ", "\n", ".", "/", "é", "ſ"]
    texts = []
    for _ in range(n):
        parts = [rng.choice(shapes)() if rng.random() < 0.3 else rng.choice(fragments)
                 for _ in range(rng.randint(1, 8))]
        text = "".join(parts) if rng.random() < 0.3 else " ".join(parts)
        texts.append(text.upper() if rng.random() < 0.1 else text)
    return texts


def test_the_gate_lets_through_every_text_a_detector_finds_something_in():
    bench = _bench_secrets()
    texts: list[str] = []
    for split in ("tune", "blind"):
        positives, negatives = bench.load(split)
        texts += positives + [line for _, line in negatives]
    texts += [statement for _, statement, _, _ in KINDS] + _generated(3000, 22)
    found = 0
    for text in texts:
        ungated = secrets._detect(text, 3)
        assert secrets.find_secrets(text) == list(ungated), text
        found += bool(ungated)
    assert found > 500  # the check is about texts that do hold secrets, not only clean ones


def test_the_narrowed_gate_branches_still_take_their_token_formats():
    """``SK`` + 32 (Twilio) and ``AP`` + hex digit + 8 (Artifactory) pass the gate; English words that
    the old two-letter branches let through to every detector ("task", "api", "apply") do not."""
    assert secrets._gate_kind("key SK" + "a1" * 16) == 3
    assert secrets._gate_kind("token=AP3abcdefgh") == 3
    assert secrets._gate_kind(" AP3abcdefgh ") == 3
    for word in ("task", "api", "apply", "ask", "desk", "apex", "private notes"):
        assert secrets._gate_kind(f"the {word} layer") == 0, word
    assert secrets.find_secrets(" AP3Bcdefgh12 ") == list(secrets._detect(" AP3Bcdefgh12 ", 3))


def _records() -> list[tuple[dict, list[dict]]]:
    """Memory and evidence column dicts with secrets and personal data in each screened field in turn."""
    base = {"memory_id": "m1", "logical_memory_id": "m1", "superseded_by": None, "tenant_id": "acme",
            "repository_id": "order-service", "module_path": "src/orders",
            "statement": "OrderValidator validates every request (case 1).", "root_cause_summary": None,
            "tags": ["orders", "api"], "applies_to": ["src/orders"], "does_not_apply_to": [],
            "invalidation_policy": [{"symbolChanged": "OrderValidator"}, {"fileChanged": "src/orders/V.py"}],
            "failure_type": None, "verification_probe": None, "source_action_ids": ["action-1"],
            "proposer_id": "wf_00001", "import_source": "records.jsonl", "state": "active", "review_state": "approved"}
    ev = {"repository_id": None, "path": "src/orders/OrderValidator.py", "ref": None, "symbol": "OrderValidator.apply",
          "target": None, "commit_sha": "0123456789abcdef0123456789abcdef01234567", "current_path": None,
          "status_reason": None, "excerpt": "def apply(self, item):\n    return item\n"}
    token, email, home = "ghp_R8eQ2kVx7TmN4pLw9ZsY3aBcD5fGhJ6uK1oW", "alice@corp.example.net", "/home/alice/src"
    out = [(base, [ev])]
    for col, value in [("statement", f"Push with {token} (ask {email})."), ("root_cause_summary", f"the password is swordfish, see {home}"),
                       ("tags", ["orders", token, email]), ("applies_to", [token]), ("does_not_apply_to", [home]),
                       ("invalidation_policy", [{"symbolChanged": token}]), ("failure_type", f"key={token}"),
                       ("verification_probe", "call +1 415 555 0100"), ("source_action_ids", [f"a-{token}"]),
                       ("proposer_id", token), ("import_source", f"x#{token}"), ("statement", f"call {email} or +1 415 555 0100")]:
        out.append(({**base, col: value}, [ev]))
    for col, value in [("path", f"src/{token}.py"), ("ref", f"password: {token}"), ("symbol", token),
                       ("target", token), ("commit_sha", token), ("current_path", token), ("status_reason", token),
                       ("excerpt", f"PGPASSWORD=walrus {email} {home}")]:
        out.append((base, [ev, {**ev, col: value}]))
    for col in ("memory_id", "logical_memory_id", "superseded_by", "tenant_id", "repository_id", "module_path"):
        out.append(({**base, col: token}, [ev]))
    out.append((base, [{**ev, "repository_id": token}]))
    return out


@pytest.mark.parametrize("personal", [True, False])
def test_screening_shortcut_equals_the_step_by_step_screening(personal):
    checked = 0
    for memory, evidence in _records():
        results = []
        for screen in (guard.screen_memory, lambda m, e, personal: guard._screen_all(m, e, personal)):
            m, ev = copy.deepcopy(memory), copy.deepcopy(evidence)
            try:
                outcome = screen(RowView(m), [RowView(e) for e in ev], personal=personal)
                results.append((outcome, m, ev))
            except guard.SecretRefused as exc:
                results.append((("refused", exc.field, exc.types), memory, evidence))
        assert results[0] == results[1], memory
        checked += 1
    assert checked == len(_records())


def test_the_gate_in_words_and_shapes_is_the_gate_regex():
    """:func:`secrets._cue_in_lower` (substring tests, then the patterned branches) answers as the
    regex :data:`secrets._GATE_ASCII_LOWER` does: every branch of the regex is one of its words or one
    of its patterns, and on texts built from the branches' own pieces and near misses they agree."""
    branches = secrets._GATE_ASCII_LOWER.pattern.split("|")
    assert sorted(b.replace(r"\.", ".") for b in branches) == sorted(secrets._GATE_LITERALS + secrets._GATE_PATTERNED)
    pieces = list(secrets._GATE_LITERALS) + ["-u", " -u", "\t-a ", " -a", "-a\n", "ghp_", "gh_", "ghx_", "sk", "ap",
                                             "ap3", "apg", "12345678:", "1234567:", "123456789012:", "a1b2c3d4",
                                             "0123456789abcdef", " ", "_", ":", ".", "/", "x", "q"]
    rng = random.Random(5)
    texts = ["", "plain words only", "ap3" + "q" * 8, "ap3" + "q" * 7, "sk" + "z" * 32, "sk" + "z" * 31]
    for _ in range(20000):
        parts = [rng.choice(pieces) for _ in range(rng.randint(1, 10))]
        texts.append("".join(p[: rng.randint(1, len(p))] if rng.random() < 0.3 else p for p in parts))
    bench = _bench_secrets()
    for split in ("tune", "blind"):
        positives, negatives = bench.load(split)
        texts += [t.lower() for t in positives + [line for _, line in negatives] if t.isascii()]
    for low in texts:
        assert secrets._cue_in_lower(low) == (secrets._GATE_ASCII_LOWER.search(low) is not None), low

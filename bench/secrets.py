"""Secret scanning on a labelled set (issue 21 item 4; bench/README.md "secrets.py").

Positives: ``bench/secrets/positives.txt``, written by hand (passwords written as words in several
languages, ``-p``/``-u user:pass`` command lines, connection strings, token formats), split by a hash of
the line into ``positives_tune.txt`` and ``positives_blind.txt``; ``positives_batch2.txt``, written after
the first run, joins the tuning split only. Negatives: every non-blank line of the
agent memory files that ``bench/real_files_corpus.yaml`` lists, at the listed commit, split by repository
as that corpus splits them (``negatives_tune.txt``, ``negatives_blind.txt``; ``--extract`` wrote them
from the mirrors once, before any tuning, and they are frozen). Each line is scanned on its own by
:func:`memtui.safety.secrets.find_secrets` and, in the same run, by plain detect-secrets (its default
plugins and filters, ``SecretsCollection.scan_file`` over the same lines) as the baseline.

Prints JSON: per split, recall on the positives and flagged lines per 1,000 negative lines, for memtui
and the baseline, and the scanner's cost per line. ``--show`` prints the tuning split's misses and false
flags to stderr (never the blind split's; ``--show-blind`` exists for the final hand check only).

    .venv/bin/python bench/secrets.py [--show] [--show-blind]
    .venv/bin/python bench/secrets.py --extract     # (re)write the frozen fixtures from /work/.mirror
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "secrets"
CORPUS = HERE / "real_files_corpus.yaml"
MIRRORS = Path("/work/.mirror")
SPLITS = ("tune", "blind")


# ---- fixtures ---------------------------------------------------------------------------------

def _split_of(line: str) -> str:
    return "tune" if hashlib.sha256(line.encode()).digest()[0] % 2 == 0 else "blind"


def extract() -> None:
    """Write the negatives (memory-file lines by repository split) and split the positives."""
    import yaml

    corpus = yaml.safe_load(CORPUS.read_text())
    out: dict[str, list[str]] = {s: [] for s in SPLITS}
    for r in corpus["repositories"]:
        git_dir = MIRRORS / r["repo"].replace("/", "+") / "repo"
        for name in r.get("files") or []:
            text = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{r['commit']}:{name}"],
                                  capture_output=True, text=True, errors="replace", check=True).stdout
            out[r["split"]] += [f"{r['repo']}:{name}:{i}\t{line}" for i, line in enumerate(text.splitlines(), 1)
                                if line.strip()]
    for split, rows in out.items():
        (DATA / f"negatives_{split}.txt").write_text("\n".join(r.replace("\r", "") for r in rows) + "\n")
    pos = {s: [] for s in SPLITS}
    for line in (DATA / "positives.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            pos[_split_of(line)].append(line)
    for split, rows in pos.items():
        (DATA / f"positives_{split}.txt").write_text("\n".join(rows) + "\n")
    print(json.dumps({s: {"negatives": len(out[s]), "positives": len(pos[s])} for s in SPLITS}))


def _fill(line: str, rng: random.Random) -> str:
    """``line`` with {NAME} placeholders replaced by seeded random values of that token's shape."""
    an = string.ascii_letters + string.digits

    def r(n: int, chars: str = an) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    def b64url(obj) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    shapes = {
        "GHP": lambda: "ghp_" + r(36), "GHPAT": lambda: "github_pat_" + r(22) + "_" + r(59),
        "AKIA": lambda: "AKIA" + r(16, string.ascii_uppercase + string.digits),
        "AWSSECRET": lambda: r(40, an + "+/"), "XOXB": lambda: f"xoxb-{r(11, string.digits)}-{r(13, string.digits)}-{r(24)}",
        "SKLIVE": lambda: "sk_live_" + r(24), "SKPROJ": lambda: "sk-proj-" + r(20) + "T3BlbkFJ" + r(20),
        "GLPAT": lambda: "glpat-" + r(20), "NPM": lambda: "npm_" + r(36), "B64": lambda: r(40),
        "HEX40": lambda: r(40, "0123456789abcdef"), "SG": lambda: "SG." + r(22) + "." + r(43),
        "JWT": lambda: b64url({"alg": "HS256", "typ": "JWT"}) + "." + b64url({"sub": r(8), "iat": 1700000000}) + "." + r(43),
    }
    for name, make in shapes.items():
        while "{" + name + "}" in line:
            line = line.replace("{" + name + "}", make(), 1)
    return line


def load(split: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(positives, negatives as (where, line)) of ``split``."""
    rng = random.Random(f"issue21-{split}")
    pos = [_fill(line, rng) for line in (DATA / f"positives_{split}.txt").read_text().splitlines() if line]
    if split == "tune":  # the second batch, written after the first run, is tuned on only
        pos += [_fill(line, rng) for line in (DATA / "positives_batch2.txt").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    neg = []
    for row in (DATA / f"negatives_{split}.txt").read_text().splitlines():
        where, _, line = row.partition("\t")
        neg.append((where, line))
    return pos, neg


# ---- scanners ---------------------------------------------------------------------------------

def baseline_flags(lines: list[str]) -> list[bool]:
    """Which lines plain detect-secrets flags (default plugins and filters, one scan of a file of the lines)."""
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    flagged: set[int] = set()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "lines.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(line.replace("\n", " ") for line in lines) + "\n")
        with default_settings():
            coll = SecretsCollection()
            coll.scan_file(path)
        for _file, secret in coll:
            flagged.add(secret.line_number - 1)
    return [i in flagged for i in range(len(lines))]


def memtui_flags(lines: list[str]) -> tuple[list[bool], float]:
    from memtui.safety.secrets import find_secrets

    t = time.perf_counter()
    out = [bool(find_secrets(line)) for line in lines]
    return out, time.perf_counter() - t


def main() -> None:
    if "--extract" in sys.argv:
        extract()
        return
    from memtui.safety.secrets import SCANNER_VERSION

    show = {"tune"} if "--show" in sys.argv else set()
    if "--show-blind" in sys.argv:
        show.add("blind")
    result: dict = {"scannerVersion": SCANNER_VERSION, "splits": {}}
    total_lines = total_time = 0.0
    for split in SPLITS:
        pos, neg = load(split)
        neg_lines = [line for _, line in neg]
        entry = {"positives": len(pos), "negativeLines": len(neg)}
        for name in ("memtui", "detect-secrets"):
            if name == "memtui":
                pf, _ = memtui_flags(pos)
                nf, dt = memtui_flags(neg_lines)
                total_lines += len(neg_lines)
                total_time += dt
            else:
                pf, nf = baseline_flags(pos), baseline_flags(neg_lines)
            found, flagged = sum(pf), sum(nf)
            entry[name] = {"found": found, "recall": round(found / max(len(pos), 1), 3), "falseFlags": flagged,
                           "falseFlagsPer1000Lines": round(1000 * flagged / max(len(neg), 1), 2)}
            if split in show and name == "memtui":
                for line, hit in zip(pos, pf):
                    if not hit:
                        print(f"[{split}] missed: {line}", file=sys.stderr)
                for (where, line), hit in zip(neg, nf):
                    if hit:
                        print(f"[{split}] false flag: {where}: {line.strip()[:160]}", file=sys.stderr)
        result["splits"][split] = entry
    result["memtuiMicrosecondsPerLine"] = round(1e6 * total_time / max(total_lines, 1), 1)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

"""Secret scanning false-flag rate on real agent memory files (issue 9; bench/README.md "Secret scanning").

Reads the agent instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, .cursorrules, .cursor/rules/*,
.clinerules, copilot-instructions.md) at HEAD of each mirror (``fetch`` leaves them under
/work/.mirror/owner+name/repo), scans every non-blank line with :func:`memtui.safety.secrets.find_secrets`
and prints flagged lines per 1,000 lines, per half: ``tuned`` (looked at while tuning) and ``blind``
(frozen in SECRETS_BLIND before tuning). Every flag on these public files is checked by hand;
``--show`` prints them. Also times the scanner per statement on 10,000 statements.

    .venv/bin/python bench/secrets.py [--show]
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from memtui.safety.secrets import SCANNER_VERSION, find_secrets

MIRRORS = Path("/work/.mirror")
#: looked at while tuning (the first five were the tuning half; the next five were meant to be blind,
#: but the first run printed their flags, so they count as tuned and a fresh blind half replaced them)
TUNED = ["steveyegge/beads", "anthropics/claude-code-action", "coleam00/Archon", "inspirepan/klaude-code",
         "kagent-dev/kagent", "bytedance/deer-flow", "maybe-finance/maybe", "modelcontextprotocol/inspector",
         "browser-use/browser-use", "containers/kubernetes-mcp-server"]
#: frozen before tuning: its flags are never printed (``--show`` prints the tuned half's only)
SECRETS_BLIND = ["tursodatabase/turso", "apache/hertzbeat", "0-AI-UG/zero-agent", "0-don/InvoiceShelf",
                 "0000005/WeAgentChat", "000Alex00/Gitea-Agent", "0-sayed/wallet"]
MEMORY_FILE = re.compile(r"(^|/)(CLAUDE(\.local)?\.md|AGENTS(\.override)?\.md|GEMINI\.md|\.cursorrules|"
                         r"\.clinerules(/.*)?|copilot-instructions\.md|\.cursor/rules/.*\.mdc?)$")


def memory_lines(repo: str) -> list[tuple[str, int, str]]:
    git_dir = MIRRORS / repo.replace("/", "+") / "repo"
    names = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", "HEAD"],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    out = []
    for name in names:
        if not MEMORY_FILE.search(name) or "node_modules" in name:
            continue
        text = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{name}"],
                              capture_output=True, text=True, errors="replace").stdout
        out += [(name, i, line) for i, line in enumerate(text.splitlines(), 1) if line.strip()]
    return out


def run(repos: list[str], show: bool) -> tuple[int, int]:
    lines = flagged = 0
    for repo in repos:
        for name, no, line in memory_lines(repo):
            lines += 1
            hits = find_secrets(line)
            if hits:
                flagged += 1
                if show:
                    print(f"  {repo}:{name}:{no}: {[h.type for h in hits]}: {line.strip()[:160]}")
    return lines, flagged


def main() -> None:
    show = "--show" in sys.argv
    print(SCANNER_VERSION)
    for label, repos in (("tuned", TUNED), ("blind", SECRETS_BLIND)):
        lines, flagged = run(repos, show and label == "tuned")
        print(f"{label}: {lines} lines, {flagged} flagged, {1000 * flagged / max(lines, 1):.2f} per 1,000 lines")
    statements = [line for repo in TUNED + SECRETS_BLIND for _, _, line in memory_lines(repo)]
    statements = (statements * (10_000 // max(len(statements), 1) + 1))[:10_000]
    statements = [f"{s} #{i}" for i, s in enumerate(statements)]  # defeat the scanner's cache
    t = time.perf_counter()
    for s in statements:
        find_secrets(s)
    dt = time.perf_counter() - t
    print(f"scan: {len(statements)} statements in {dt:.2f} s, {1e6 * dt / len(statements):.0f} µs per statement")


if __name__ == "__main__":
    main()

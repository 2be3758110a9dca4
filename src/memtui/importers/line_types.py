"""Types of memory-file lines (issue 20, item 5): what a line says decides its type, the heading above
it only breaks a tie. Architecture decisions only for a decision with its reason or an ADR; ``task``
only for dated or finite work, so nothing else imported from a memory file expires by the task policy.
Pure functions; no I/O.
"""

from __future__ import annotations

import re
from typing import Sequence

_CMD_WORDS = r"(?:npm|pnpm|yarn|npx|uv|uvx|pip|pip3|python3?|pytest|make|cargo|go|docker|docker-compose|kubectl|git|gh|bd|bun|bunx|deno|just|mvn|mvnw|gradle|gradlew|bash|sh|zsh|curl|tox|nox|ruff|mypy|poetry|rails|bundle|rake|node|tsc|buf|helm|kind|terraform|cd|source|export|brew|apt|apt-get|pre-commit|hatch|pdm|rye|dotnet|swift|xcodebuild|flutter|dart|composer|php|ruby|rspec|jest|vitest|playwright|eslint|prettier|biome|turbo|nx|lerna|mise|asdf|nvm|sqlx|alembic|django-admin|manage\.py|uvicorn|gunicorn|ollama|psql|mysql|redis-cli|k9s|skaffold|tilt|air|goreleaser|golangci-lint|ansible|vagrant|wrangler|vercel|firebase|supabase|prisma|drizzle-kit)"
_CMD_SPAN = re.compile(r"`(?:\$\s*)?(?:sudo\s+)?(?:\./|bin/|scripts/)?" + _CMD_WORDS + r"(?:\s[^`]*)?`|`\./[\w./-]+(?:\s[^`]*)?`|`(?:\$\s*)?(?:sudo\s+)?[\w-]+\s+(?:run|install|test|build|exec|start|dev|lint|format|check)\b[^`]*`", re.I)
_RUN_START = re.compile(r"^(?:always\s+|then\s+|first,?\s+)?(?:run|running|start|starting|install|installing|build|building|execute|launch|deploy|invoke|set up|setup|bootstrap|regenerate|generate|compile|serve)\b", re.I)
_CMD_LABEL = re.compile(r"^(?:commands?|command|task|script|scripts|usage|run|running \w+|quick ?start|setup|install(?:ation)?|build|dev(?:elopment)? server)\s*:", re.I)
_PERSONA = re.compile(r"^(?:you are|you're|act as|your role is)\b", re.I)
_PREF = re.compile(r"^(?:prefers|likes|dislikes|wants|enjoys|hates|is allergic|works best)\b", re.I)
_LESSON = re.compile(r"\b(?:gotcha|pitfall|caveat|known issue|lesson|bites?|beware|watch out|trap|footgun|may fail|fails? (?:when|with|if)|workaround|common mistakes?|surprising|flaky)\b", re.I)
_DECISION = re.compile(r"\b(?:we (?:have )?(?:chosen|chose|decided|picked|opted)|decision:|\badr[- ]?\d+|architecture decision|design decision)\b", re.I)
_REASON = re.compile(r"\b(?:because|so that|instead of|rather than|trade-?off|in order to|due to)\b", re.I)
_TEST = re.compile(r"\b(?:tests?|testing|fixtures?|mocks?|mocking|coverage|assert(?:ions?)?|specs?|e2e|unit tests?|integration tests?|test suite|conftest|snapshot tests?)\b", re.I)
_IMPERATIVE = re.compile(r"^(?:[✅❌⚠️🚫]\s*)?(?:always|never|do not|don't|dont|must|should|use|prefer|avoid|keep|make sure|ensure|add|write|put|call|check|place|follow|only|no |please|do\b|include|document|raise|wrap|validate|handle|reuse|mark|treat|comment|limit|favor|favour|stick|leave|think|consider|rely|separate)\b|\b(?:must|should|never|always|do not|don't|required?|mandatory|forbidden|not allowed|prohibited|recommended)\b", re.I)
_TASK = re.compile(r"^(?:todo|fixme|wip)\b|\b(?:in progress|by (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w* \d|deadline|due (?:on|by)|this (?:sprint|week))\b|^\[ \]", re.I)
_WHEN = re.compile(r"^(?:when|before|after|if|for every|for each|whenever|once)\b[^,:]{0,120}[,:]\s*(?:always\s+|also\s+|then\s+)?(?:verify|use|update|add|reuse|create|keep|check|make|write|coordinate|read|run|do|don't|never|avoid|prefer|mark|accept|include|ensure|follow|document|call|put|remove|test)\b", re.I)
_H_CONV = re.compile(r"conventions?|guidelines?|rules?|principles?|style|standards?|best practices?|do'?s|don'?ts?|important|policy|requirements?|constraints?|etiquette|checklist", re.I)
_H_TEST = re.compile(r"\btests?\b|testing", re.I)
_H_HOWTO = re.compile(r"^(?:\d+\s+)|\b(?:adding an?|add an?|creating an?|how to|steps?|new \w+ (?:type|command|tool))\b", re.I)
_HOWTO_VERB = re.compile(r"^(?:create|define|implement|import|register|add|edit|write|export|wire|declare|copy|open|set)\b", re.I)
_H_RUN = re.compile(r"commands?|scripts?|quick ?(?:reference|start)|setup|set up|install|running|build|deploy|release|development workflow|how to run|getting started|usage", re.I)
_H_LESSON = re.compile(r"gotchas?|pitfalls?|mistakes?|caveats?|known issues?|lessons?|troubleshoot", re.I)

def type_for_line(statement: str, sections: Sequence[str] = (), labels: Sequence[str] = ()) -> str:
    """The memory type of one line of a memory file (issue 20, item 5): from what the line says first --
    a persona, a preference, a decision with its reason or an ADR, a lesson, a dated task, a command or
    how-to (``runbook``), a test convention, a rule (``repo_convention``) -- then from the nearest
    heading (``sections``: the headings above it, outermost first; ``labels``: the lead-ins it is
    nested under), else ``code_fact`` (catalogues, folder maps and reference lists are facts).
    Picked on the tune split of ``bench/types/labels.yaml``; ``bench/types.py`` measures it."""
    t = statement.strip().lstrip("*_`✅❌⚠️🚫 ").strip()
    sections, labels = list(sections), list(labels)
    heads = " ".join(sections[-2:] + labels)
    if _PERSONA.search(t): return "agent_persona"
    if _PREF.search(t): return "user_preference"
    if _DECISION.search(t) or (re.search(r"decision|adr", heads, re.I) and _REASON.search(t)): return "architecture_decision"
    if _LESSON.search(t) or _H_LESSON.search(heads): return "evaluation_lesson"
    if _TASK.search(t): return "task"
    cmd = bool(_CMD_SPAN.search(statement)) or bool(_CMD_LABEL.search(t)) or bool(
        re.search(r"^(?:before|after|when)\b[^,]{0,80},\s*run\b", t, re.I))
    if _HOWTO_VERB.search(t) and any(_H_HOWTO.search(h) for h in sections[-1:]): return "runbook"
    if cmd or (_RUN_START.search(t) and "`" in statement): return "runbook"
    imperative = bool(_IMPERATIVE.search(t)) or bool(_WHEN.search(t)) or bool(re.match(r"^(?:update|coordinate|verify|read|mark|review|prefix|name|sort|group|bump|open|tag|squash|rebase|link|cite|reference|edit)\s+(?!\w+s\b)", t, re.I))
    if _TEST.search(t) and (imperative or _H_TEST.search(heads)) and not re.search(r"without testing|before (?:pushing|committing)", t, re.I): return "test_convention"
    if imperative: return "repo_convention"
    if _H_TEST.search(heads) and _TEST.search(t): return "test_convention"
    if _H_RUN.search(" ".join(sections[-2:])) and statement.lstrip().startswith("`"): return "runbook"
    near = " ".join(list(sections[-1:]) + list(labels))
    if _H_CONV.search(near): return "repo_convention"
    return "code_fact"

"""A judge you can plug in (issue 20, item 6): an OpenAI-compatible chat-completions endpoint asked
about the pairs the embedded scorer is unsure of.

The embedded pair scorer (:mod:`memtui.similarity.scorer`) stays the default and needs no network.
With a ``judge`` setting (the ``judge:`` section of ``config.yaml`` in
:func:`memtui.userconfig.config_dir`, or ``memtui maintain --judge URL``) a caller hands the pairs of
its uncertain band to :meth:`Judge.judge`, which asks the endpoint a fixed prompt (:data:`PROMPT_VERSION`)
whether two memory statements are ``duplicate``, ``conflict`` or ``neither``, with a one-line reason.

* Answers are parsed strictly: the message content must be one JSON object
  ``{"verdict": "duplicate|conflict|neither", "reason": "..."}`` (surrounding whitespace or one code
  fence tolerated); anything else is malformed.
* Answers are cached in the store (:class:`memtui.store.models.JudgeVerdict`) by the pair's content,
  the model and the prompt version; a cached answer costs no request.
* At most ``budget`` requests a run, one at a time, each bounded by ``timeout_s``.
* Any error (connection refused, timeout, HTTP error, redirect, malformed answer, unknown verdict)
  gives ``None`` for that pair: the caller keeps the embedded verdict. After
  :data:`MAX_CONSECUTIVE_TRANSPORT_FAILURES` connection failures or timeouts in a row nothing more is
  sent this run.
* Every reason is labelled as the judge's: ``"judge <model>: <reason>"`` (:attr:`JudgeAnswer.label`).

Only the standard library speaks HTTP (``urllib.request``). The statements are sent to the endpoint;
the bearer key (named by ``api_key_env``) is read from the environment per run, never stored or printed.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlmodel import Session

#: Changes whenever the prompt or the answer's parsing changes: part of the cache key.
PROMPT_VERSION = "1"
VERDICTS = ("duplicate", "conflict", "neither")
#: Connection failures or timeouts in a row after which the judge sends nothing more this run.
MAX_CONSECUTIVE_TRANSPORT_FAILURES = 3
#: An answer body larger than this (bytes) is malformed.
MAX_RESPONSE_BYTES = 1 << 20
#: A reason is cut to this many characters (one line).
MAX_REASON_CHARS = 300
SETTINGS = ("url", "model", "budget", "timeout_s", "api_key_env")

SYSTEM_PROMPT = (
    "You compare two memory statements about one code base; coding agents read these memories. "
    "Decide whether they are:\n"
    "- duplicate: both state the same fact, so one of them can be dropped;\n"
    "- conflict: both cannot be true of the code base at the same time;\n"
    "- neither: anything else (different subjects, or related but compatible facts).\n"
    "Reply with exactly one JSON object and nothing else: "
    '{"verdict": "duplicate" or "conflict" or "neither", "reason": "one line saying why"}'
)

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_FENCE = re.compile(r"```(?:json)?[ \t]*\n?(.*?)\n?[ \t]*```", re.DOTALL | re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class JudgeConfig:
    """The judge setting. ``url``: an http(s) base URL (``{url}/v1/chat/completions`` is called; a URL
    ending in ``/v1`` gets ``/chat/completions``, one ending in ``/chat/completions`` is used as is);
    ``model``: the model name sent (and the cache's); ``budget``: requests a run (cached answers do
    not count; 0 sends nothing); ``timeout_s``: seconds for each request; ``api_key_env``: the name
    of an environment variable holding a bearer key (None: no Authorization header).
    Raises ValueError ``"judge.FIELD: ..."`` for a bad value."""

    url: str
    model: str = "default"
    budget: int = 50
    timeout_s: float = 20.0
    api_key_env: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url.strip():
            raise ValueError("judge.url: must be an http:// or https:// URL")
        try:
            parts = urllib.parse.urlsplit(self.url.strip())
            parts.port  # noqa: B018 (raises ValueError for a bad port)
        except ValueError:
            raise ValueError("judge.url: not a valid URL") from None
        if parts.username is not None or parts.password is not None:  # not echoed: it may hold a password
            raise ValueError("judge.url: must not hold a user name or password; name the key's variable "
                             "in judge.api_key_env")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"judge.url: must be an http:// or https:// URL with a host, not {self.url!r}")
        if not isinstance(self.model, str) or not self.model.strip() or len(self.model) > 200 \
                or _CONTROL.search(self.model):
            raise ValueError("judge.model: must be a model name (1 to 200 printable characters)")
        if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget < 0:
            raise ValueError(f"judge.budget: must be a whole number of pairs, 0 or more, not {self.budget!r}")
        if isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, (int, float)) \
                or not 0 < self.timeout_s <= 600:
            raise ValueError(f"judge.timeout_s: must be a number of seconds above 0 and at most 600, "
                             f"not {self.timeout_s!r}")
        if self.api_key_env is not None and (not isinstance(self.api_key_env, str)
                                             or not _ENV_NAME.match(self.api_key_env)):
            # the value is not echoed: it may be the key itself, written where its name belongs
            raise ValueError("judge.api_key_env: must be the NAME of an environment variable holding "
                             "the key (letters, digits, _), not the key itself")

    @property
    def endpoint(self) -> str:
        """The chat-completions URL POSTed to."""
        parts = urllib.parse.urlsplit(self.url.strip())
        path = parts.path.rstrip("/")
        if not path.endswith("/chat/completions"):
            path += "/chat/completions" if path.endswith("/v1") else "/v1/chat/completions"
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def load_judge_config(path: Path | None = None) -> JudgeConfig | None:
    """The ``judge:`` section of ``path`` (default :func:`memtui.userconfig.config_file`), or None when
    the file or the section is absent (or ``judge:`` is empty). Keys: :data:`SETTINGS`.
    Raises ValueError ``"FILE: judge.FIELD: ..."`` for an unreadable file, bad YAML, an unknown key or a
    bad value."""
    import yaml

    from memtui.userconfig import config_file

    path = path or config_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the settings file: {exc}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML: {exc}") from exc
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: must be a YAML mapping (for example 'judge: {{url: ...}}')")
    section = data.get("judge")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ValueError(f"{path}: judge: must be a mapping of {', '.join(SETTINGS)}")
    unknown = sorted(str(k) for k in section if k not in SETTINGS)
    if unknown:
        raise ValueError(f"{path}: judge.{unknown[0]}: unknown setting; the settings are {', '.join(SETTINGS)}")
    if "url" not in section:
        raise ValueError(f"{path}: judge.url: missing (the endpoint's base URL, e.g. http://127.0.0.1:11434)")
    try:
        return JudgeConfig(**section)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc


@dataclass(frozen=True)
class JudgeAnswer:
    """The judge's answer for one pair: ``verdict`` one of :data:`VERDICTS`; ``reason`` the judge's own
    one-line reason (what is cached); ``model`` the model asked; ``cached`` when no request was made.
    :attr:`label` is the reason as every record shows it."""

    verdict: str
    reason: str
    model: str
    cached: bool

    @property
    def label(self) -> str:
        """``"judge <model>: <reason>"``: the reason labelled as the judge's."""
        return f"judge {self.model}: {self.reason}"


class JudgeFailure(Exception):
    """One request gave no usable answer; ``transport`` for a connection failure or a timeout."""

    def __init__(self, message: str, transport: bool = False):
        super().__init__(message)
        self.transport = transport


def cache_key(a: str, b: str, model: str) -> str:
    """sha256 (hex) of both statements (order-independent), the model and :data:`PROMPT_VERSION`."""
    x, y = sorted((a, b))
    return hashlib.sha256("\x00".join((x, y, model, PROMPT_VERSION)).encode()).hexdigest()


def messages_for(a: str, b: str) -> list[dict[str, str]]:
    """The fixed prompt for one pair (statements in sorted order, JSON-quoted so neither can end early)."""
    x, y = sorted((a, b))
    user = (f"Statement A: {json.dumps(x, ensure_ascii=False)}\n"
            f"Statement B: {json.dumps(y, ensure_ascii=False)}")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def _clean_reason(text: str) -> str:
    from memtui.text import without_escapes

    one_line = " ".join(_CONTROL.sub(" ", without_escapes(text)).split())
    return one_line if len(one_line) <= MAX_REASON_CHARS else one_line[:MAX_REASON_CHARS - 1] + "…"


def parse_answer(body: bytes) -> tuple[str, str]:
    """``(verdict, reason)`` from a chat-completions response body. The first choice's message content
    must be one JSON object with exactly ``verdict`` (one of :data:`VERDICTS`) and ``reason`` (a
    non-empty string, made one line of at most :data:`MAX_REASON_CHARS` characters); whitespace and one
    surrounding code fence are tolerated. Raises JudgeFailure ("malformed answer: ...") otherwise."""
    def bad(why: str) -> JudgeFailure:
        return JudgeFailure(f"malformed answer: {why}")

    try:
        response = json.loads(body.decode("utf-8"))
        content = response["choices"][0]["message"]["content"]
    except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise bad(f"not a chat-completions response ({type(exc).__name__})") from None
    if not isinstance(content, str):
        raise bad("the message has no text content")
    content = content.strip()
    fenced = _FENCE.fullmatch(content)
    if fenced:
        content = fenced.group(1).strip()
    try:
        answer = json.loads(content)
    except ValueError:
        raise bad("the content is not one JSON object") from None
    if not isinstance(answer, dict):
        raise bad("the content is not one JSON object")
    if set(answer) != {"verdict", "reason"}:
        raise bad(f"keys must be verdict and reason, not {', '.join(sorted(map(str, answer))) or 'none'}")
    verdict, reason = answer["verdict"], answer["reason"]
    if verdict not in VERDICTS:
        raise bad(f"unknown verdict {str(verdict)[:40]!r}")
    if not isinstance(reason, str) or not _clean_reason(reason):
        raise bad("the reason is not a non-empty string")
    return verdict, _clean_reason(reason)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an error: a POST is never re-sent elsewhere, nor its Authorization header."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102
        raise urllib.error.HTTPError(req.full_url, code, f"redirect to {newurl} refused", headers, fp)


def _is_loopback(host: str | None) -> bool:
    if host in (None, "localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(eq=False)
class Judge:
    """Asks ``config``'s endpoint about pairs; one instance is one run (its budget and counters).

    Counters after :meth:`judge` (summed over calls): ``sent`` requests made, ``answered`` of them with
    a usable answer, ``failed`` of them without, ``cached`` pairs answered from the store (or earlier
    in the run), ``over_budget`` pairs not sent because the budget was used, ``skipped`` pairs not
    sent because the endpoint was given up on (connection failures in a row, or ``api_key_env`` unset).
    Every pair is counted once: cached + answered + failed + over_budget + skipped = pairs.
    ``errors``: the first distinct failure messages (at most 5; never the key)."""

    config: JudgeConfig
    sent: int = field(default=0, init=False)
    answered: int = field(default=0, init=False)
    failed: int = field(default=0, init=False)
    cached: int = field(default=0, init=False)
    over_budget: int = field(default=0, init=False)
    skipped: int = field(default=0, init=False)
    errors: list[str] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self._transport_failures = 0
        self._given_up = False
        self._known: dict[str, JudgeAnswer] = {}  # answers of this run by cache key (no second add of a row)
        handlers: list[Any] = [_NoRedirect()]
        if _is_loopback(urllib.parse.urlsplit(self.config.endpoint).hostname):
            handlers.append(urllib.request.ProxyHandler({}))  # a local server is never reached via a proxy
        self._opener = urllib.request.build_opener(*handlers)

    def counts(self) -> dict[str, int]:
        """The counters for a job summary (camelCase keys)."""
        return {"sent": self.sent, "answered": self.answered, "failed": self.failed, "cached": self.cached,
                "overBudget": self.over_budget, "skipped": self.skipped}

    def _note(self, message: str) -> None:
        if message not in self.errors and len(self.errors) < 5:
            self.errors.append(message)

    def judge(self, engine_or_session: "Engine | Session", pairs: list[tuple[str, str]]) -> list[JudgeAnswer | None]:
        """One answer per pair of statements, in order; None where the judge gave none (the caller keeps
        its embedded verdict). With a Session new answers are only ``session.add``-ed (the caller's
        transaction commits them); with an Engine they are committed in a session of its own. Never
        raises for the endpoint's failures; a store error propagates."""
        from sqlmodel import Session

        if isinstance(engine_or_session, Session):
            return self._judge(engine_or_session, pairs)
        with Session(engine_or_session) as session, session.begin():
            return self._judge(session, pairs)

    def _judge(self, session: "Session", pairs: list[tuple[str, str]]) -> list[JudgeAnswer | None]:
        from memtui.clock import utcnow
        from memtui.store.models import JudgeVerdict

        model = self.config.model
        known = self._known
        out: list[JudgeAnswer | None] = []
        key = self._api_key()
        for a, b in pairs:
            ck = cache_key(a, b, model)
            hit = known.get(ck)
            if hit is None:
                row = session.get(JudgeVerdict, ck)
                if row is not None:
                    hit = known[ck] = JudgeAnswer(row.verdict, row.reason, model, True)
            if hit is not None:
                self.cached += 1
                out.append(hit if hit.cached else JudgeAnswer(hit.verdict, hit.reason, model, True))
                continue
            if self._given_up:
                self.skipped += 1
                out.append(None)
                continue
            if self.sent >= self.config.budget:
                self.over_budget += 1
                out.append(None)
                continue
            self.sent += 1
            try:
                verdict, reason = self._ask(a, b, key)
            except JudgeFailure as exc:
                self.failed += 1
                self._note(str(exc))
                self._transport_failures = self._transport_failures + 1 if exc.transport else 0
                if self._transport_failures >= MAX_CONSECUTIVE_TRANSPORT_FAILURES:
                    self._give_up(f"{self._transport_failures} connection failures or timeouts in a row: "
                                  "nothing more sent this run")
                out.append(None)
                continue
            self._transport_failures = 0
            self.answered += 1
            session.add(JudgeVerdict(cache_key=ck, model=model, verdict=verdict, reason=reason, created_at=utcnow()))
            known[ck] = JudgeAnswer(verdict, reason, model, False)
            out.append(known[ck])
        return out

    def _give_up(self, why: str) -> None:
        self._given_up = True
        self._note(why)

    def _api_key(self) -> str | None:
        name = self.config.api_key_env
        if name is None:
            return None
        value = os.environ.get(name, "").strip()
        if not value:
            self._give_up(f"environment variable {name} (judge.api_key_env) is not set: nothing sent")
        return value or None

    def _ask(self, a: str, b: str, key: str | None) -> tuple[str, str]:
        """Send one pair; ``(verdict, reason)`` or JudgeFailure (``transport`` for no connection or a timeout)."""
        cfg = self.config
        body = json.dumps({"model": cfg.model, "messages": messages_for(a, b), "temperature": 0,
                           "stream": False}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(cfg.endpoint, data=body, headers=headers, method="POST")
        deadline = time.monotonic() + cfg.timeout_s
        try:
            with self._opener.open(request, timeout=cfg.timeout_s) as response:
                data = b""
                while len(data) <= MAX_RESPONSE_BYTES:
                    if time.monotonic() > deadline:
                        raise JudgeFailure(f"no answer within {cfg.timeout_s:g} s", transport=True)
                    chunk = response.read(65536)
                    if not chunk:
                        break
                    data += chunk
        except urllib.error.HTTPError as exc:
            exc.close()
            raise JudgeFailure(f"HTTP {exc.code} from {cfg.endpoint}") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise JudgeFailure(f"no answer within {cfg.timeout_s:g} s", transport=True) from None
            raise JudgeFailure(f"cannot reach {cfg.endpoint}: {exc.reason}", transport=True) from None
        except (TimeoutError, socket.timeout):
            raise JudgeFailure(f"no answer within {cfg.timeout_s:g} s", transport=True) from None
        except OSError as exc:
            raise JudgeFailure(f"connection to {cfg.endpoint} failed: {exc}", transport=True) from None
        except JudgeFailure:
            raise
        except Exception as exc:  # http.client.HTTPException and anything else: no answer, never a crash
            raise JudgeFailure(f"bad response from {cfg.endpoint}: {type(exc).__name__}") from None
        if len(data) > MAX_RESPONSE_BYTES:
            raise JudgeFailure(f"malformed answer: larger than {MAX_RESPONSE_BYTES} bytes")
        return parse_answer(data)


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urllib.parse.urlsplit(url.strip())
    return parts.scheme, parts.hostname, parts.port or {"http": 80, "https": 443}.get(parts.scheme)


def resolve_judge_config(url: str | None = None, model: str | None = None,
                         path: Path | None = None) -> JudgeConfig | None:
    """The judge of a run: ``url`` / ``model`` (``--judge`` / ``--judge-model``) override the settings
    file's ``judge:`` section (:func:`load_judge_config`; its budget and timeout are kept, its
    ``api_key_env`` only when ``url`` has the file's scheme, host and port, so a key never goes to
    another server). None when neither gives a URL. Raises ValueError for a bad file or value, and
    for ``model`` without any URL."""
    from dataclasses import replace

    from memtui.userconfig import config_file

    saved = load_judge_config(path)
    if url is None:
        if model is None or saved is None:
            if model is not None:
                raise ValueError(f"--judge-model needs --judge URL or a judge: section in {path or config_file()}")
            return saved
        try:
            return replace(saved, model=model)
        except ValueError as exc:
            raise ValueError(str(exc).replace("judge.model:", "--judge-model:", 1)) from None
    try:
        if saved is None:
            return JudgeConfig(url=url, **({"model": model} if model is not None else {}))
        return replace(saved, url=url, model=saved.model if model is None else model,
                       api_key_env=saved.api_key_env if _origin(url) == _origin(saved.url) else None)
    except ValueError as exc:  # name the option, not the file's field
        raise ValueError(re.sub(r"^judge\.(url|model):", lambda m: {"url": "--judge:", "model": "--judge-model:"}[m[1]],
                                str(exc))) from None

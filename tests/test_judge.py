"""The pluggable judge (issue 20, item 6) against a real local OpenAI-compatible HTTP server: the
protocol, strict parsing, the verdict cache in a real SQLite store, the budget, the timeout, the
fallback on every error, the settings file, and ``memtui maintain --judge``."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml
from sqlmodel import Session, select
from typer.testing import CliRunner

from memtui.similarity.judge import (PROMPT_VERSION, SYSTEM_PROMPT, Judge, JudgeAnswer, JudgeConfig, cache_key,
                                     load_judge_config, resolve_judge_config)
from memtui.store.engine import open_store
from memtui.store.models import JudgeVerdict

REDIS = "Redis is the session cache."
MEMCACHED = "Sessions are cached in Memcached."
LINT = "Run golangci-lint before pushing."
PUSH = "Lint with golangci-lint before every push."


def chat(content) -> bytes:
    """An OpenAI chat-completions response whose first choice says ``content``."""
    return json.dumps({"id": "c1", "object": "chat.completion", "model": "served-name",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}]}).encode()


def verdict(v: str, reason: str) -> bytes:
    return chat(json.dumps({"verdict": v, "reason": reason}))


class FakeEndpoint:
    """A ThreadingHTTPServer on 127.0.0.1 that records each request (path, headers, JSON body) and
    answers with ``reply(body_json) -> (status, bytes, delay_s)`` (default: a "neither" verdict)."""

    def __init__(self):
        self.requests: list[dict] = []
        self.reply = lambda body: (200, verdict("neither", "different subjects"), 0.0)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                outer.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status, data, delay = outer.reply(body)
                if delay:
                    time.sleep(delay)
                self.send_response(status)
                if status in (301, 302, 307):
                    self.send_header("Location", "http://127.0.0.1:1/elsewhere")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except OSError:  # the client gave up (timeout)
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint():
    ep = FakeEndpoint()
    yield ep
    ep.close()


@pytest.fixture(scope="module")
def migrated_store(tmp_path_factory):
    """One real SQLite store migrated once (migrating takes a few tenths of a second); each test copies it."""
    path = tmp_path_factory.mktemp("judge-store") / "m.db"
    open_store(str(path)).dispose()
    return path


@pytest.fixture
def engine(tmp_path, migrated_store):
    shutil.copy(migrated_store, tmp_path / "m.db")
    eng = open_store(str(tmp_path / "m.db"))
    yield eng
    eng.dispose()


def run_judge(engine, judge: Judge, pairs):
    """As the conflict job does: inside one transaction of the caller's Session."""
    with Session(engine) as session, session.begin():
        return judge.judge(session, pairs)


def rows(engine) -> list[JudgeVerdict]:
    with Session(engine) as session:
        return sorted(session.exec(select(JudgeVerdict)), key=lambda r: r.reason)


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# --- protocol and parsing ---------------------------------------------------------------------------

def test_request_is_the_fixed_prompt_and_the_answer_is_labelled(endpoint, engine, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    endpoint.reply = lambda body: (200, verdict("conflict", "Redis and Memcached are different caches"), 0.0)
    j = Judge(JudgeConfig(url=endpoint.url, model="tiny-1"))
    out = run_judge(engine, j, [(REDIS, MEMCACHED)])

    assert out == [JudgeAnswer("conflict", "Redis and Memcached are different caches", "tiny-1", False)]
    assert out[0].label == "judge tiny-1: Redis and Memcached are different caches"
    [req] = endpoint.requests
    assert req["path"] == "/v1/chat/completions"
    assert "Authorization" not in req["headers"]
    assert req["headers"]["Content-Type"] == "application/json"
    body = req["body"]
    assert body["model"] == "tiny-1" and body["temperature"] == 0 and body["stream"] is False
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == SYSTEM_PROMPT
    for word in ("duplicate", "conflict", "neither", '"verdict"', '"reason"'):
        assert word in SYSTEM_PROMPT
    # statements in sorted order, JSON-quoted
    assert body["messages"][1]["content"] == f"Statement A: {json.dumps(REDIS)}\nStatement B: {json.dumps(MEMCACHED)}"
    assert j.counts() == {"sent": 1, "answered": 1, "failed": 0, "cached": 0, "overBudget": 0, "skipped": 0}


@pytest.mark.parametrize("url, path", [("{base}/", "/v1/chat/completions"), ("{base}/v1", "/v1/chat/completions"),
                                       ("{base}/api/chat/completions", "/api/chat/completions")])
def test_endpoint_path(endpoint, engine, url, path):
    run_judge(engine, Judge(JudgeConfig(url=url.format(base=endpoint.url))), [(LINT, PUSH)])
    assert [r["path"] for r in endpoint.requests] == [path]


def test_bearer_key_only_from_the_named_environment_variable(endpoint, engine, monkeypatch):
    monkeypatch.setenv("MEMTUI_TEST_JUDGE_KEY", "sk-test-123")
    j = Judge(JudgeConfig(url=endpoint.url, api_key_env="MEMTUI_TEST_JUDGE_KEY"))
    assert run_judge(engine, j, [(LINT, PUSH)])[0].verdict == "neither"
    assert endpoint.requests[0]["headers"]["Authorization"] == "Bearer sk-test-123"
    assert "sk-test" not in repr(j.config) and not any("sk-test" in r.reason for r in rows(engine))

    monkeypatch.delenv("MEMTUI_TEST_JUDGE_KEY")  # named but unset: nothing is sent, no key-less request
    j2 = Judge(JudgeConfig(url=endpoint.url, model="other", api_key_env="MEMTUI_TEST_JUDGE_KEY"))
    assert run_judge(engine, j2, [(LINT, PUSH), (REDIS, MEMCACHED)]) == [None, None]
    assert len(endpoint.requests) == 1 and j2.skipped == 2 and j2.sent == 0
    assert j2.errors == ["environment variable MEMTUI_TEST_JUDGE_KEY (judge.api_key_env) is not set: nothing sent"]


@pytest.mark.parametrize("content", [
    '  {"verdict": "duplicate", "reason": "both say lint before pushing"}\n',
    '```json\n{"verdict": "duplicate", "reason": "both say lint before pushing"}\n```',
    '\n```\n{"verdict": "duplicate", "reason": "both say lint before pushing"}\n```  ',
    '{"verdict": "duplicate", "reason": "both say\\nlint   before pushing"}',  # made one line
])
def test_tolerated_wrappings(endpoint, engine, content):
    endpoint.reply = lambda body: (200, chat(content), 0.0)
    [a] = run_judge(engine, Judge(JudgeConfig(url=endpoint.url, model="m")), [(LINT, PUSH)])
    assert (a.verdict, a.label) == ("duplicate", "judge m: both say lint before pushing")


@pytest.mark.parametrize("status, data", [
    (200, chat("They are duplicates.")),                                        # not JSON
    (200, chat('Sure: {"verdict": "duplicate", "reason": "same"}')),            # text around the object
    (200, chat('{"verdict": "maybe", "reason": "unsure"}')),                     # unknown verdict
    (200, chat('{"verdict": "Duplicate", "reason": "same"}')),                   # verdicts are exact
    (200, chat('{"verdict": "duplicate"}')),                                     # missing reason
    (200, chat('{"verdict": "duplicate", "reason": "   "}')),                    # empty reason
    (200, chat('{"verdict": "duplicate", "reason": 3}')),                        # reason not text
    (200, chat('{"verdict": "duplicate", "reason": "same", "score": 0.9}')),    # extra key
    (200, chat('["duplicate", "same"]')),                                        # not an object
    (200, chat(None)),                                                           # no content
    (200, b'{"error": "model not loaded"}'),                                     # not a chat completion
    (200, b"<html>hello</html>"),
    (500, b'{"error": "boom"}'),                                                 # HTTP error
    (401, b'{"error": "no key"}'),
    (302, b""),                                                                  # a redirect is refused
])
def test_malformed_answers_and_http_errors_fall_back(endpoint, engine, status, data):
    endpoint.reply = lambda body: (status, data, 0.0)
    j = Judge(JudgeConfig(url=endpoint.url))
    assert run_judge(engine, j, [(LINT, PUSH)]) == [None]
    assert (j.sent, j.failed, j.answered) == (1, 1, 0)
    assert len(endpoint.requests) == 1  # the redirect was not followed
    assert rows(engine) == []           # nothing cached
    assert j.errors and (j.errors[0].startswith("malformed answer") or j.errors[0].startswith(f"HTTP {status}"))


def test_http_errors_do_not_stop_the_run(endpoint, engine):
    endpoint.reply = lambda body: (500, b"{}", 0.0)
    j = Judge(JudgeConfig(url=endpoint.url))
    pairs = [(f"Statement {i}.", f"Other {i}.") for i in range(5)]
    assert run_judge(engine, j, pairs) == [None] * 5
    assert len(endpoint.requests) == 5 and j.failed == 5 and j.skipped == 0


# --- cache and budget --------------------------------------------------------------------------------

def test_answers_are_cached_in_the_store_by_content_model_and_prompt(endpoint, engine):
    endpoint.reply = lambda body: (200, verdict("conflict", "different cache") if "Redis" in body["messages"][1]["content"]
                                   else verdict("duplicate", "same rule"), 0.0)
    first = run_judge(engine, Judge(JudgeConfig(url=endpoint.url, model="m1")), [(LINT, PUSH), (REDIS, MEMCACHED)])
    assert [(a.verdict, a.cached) for a in first] == [("duplicate", False), ("conflict", False)]
    stored = rows(engine)
    assert [(r.cache_key, r.model, r.verdict, r.reason) for r in stored] == [
        (cache_key(REDIS, MEMCACHED, "m1"), "m1", "conflict", "different cache"),
        (cache_key(LINT, PUSH, "m1"), "m1", "duplicate", "same rule")]
    assert len(stored[0].cache_key) == 64 and PROMPT_VERSION

    # a second run (pairs swapped) sends nothing: both answers come from the store
    j = Judge(JudgeConfig(url=endpoint.url, model="m1", budget=0))
    again = run_judge(engine, j, [(MEMCACHED, REDIS), (PUSH, LINT)])
    assert again == [JudgeAnswer("conflict", "different cache", "m1", True),
                     JudgeAnswer("duplicate", "same rule", "m1", True)]
    assert again[0].label == "judge m1: different cache"
    assert len(endpoint.requests) == 2 and j.counts()["cached"] == 2 and j.sent == 0

    # another model is another cache entry
    run_judge(engine, Judge(JudgeConfig(url=endpoint.url, model="m2")), [(LINT, PUSH)])
    assert len(endpoint.requests) == 3 and len(rows(engine)) == 3


def test_session_answers_are_only_added_not_committed(endpoint, engine):
    with Session(engine) as session, session.begin():
        Judge(JudgeConfig(url=endpoint.url)).judge(session, [(LINT, PUSH)])
        session.rollback()  # the caller's transaction decides (a dry run rolls back)
    assert rows(engine) == []
    # an Engine: the judge commits in a session of its own
    assert Judge(JudgeConfig(url=endpoint.url)).judge(engine, [(LINT, PUSH)])[0].verdict == "neither"
    assert len(rows(engine)) == 1


def test_a_pair_repeated_in_one_run_is_sent_once(endpoint, engine):
    j = Judge(JudgeConfig(url=endpoint.url))
    out = run_judge(engine, j, [(LINT, PUSH), (PUSH, LINT)])
    out += run_judge(engine, j, [(LINT, PUSH)])
    assert [a.cached for a in out] == [False, True, True]
    assert len(endpoint.requests) == 1 and len(rows(engine)) == 1


def test_budget_bounds_the_requests_and_cached_answers_do_not_count(endpoint, engine):
    run_judge(engine, Judge(JudgeConfig(url=endpoint.url)), [(LINT, PUSH)])  # cached from now on
    endpoint.requests.clear()
    pairs = [(LINT, PUSH)] + [(f"Statement {i}.", f"Other {i}.") for i in range(5)]
    j = Judge(JudgeConfig(url=endpoint.url, budget=2))
    out = run_judge(engine, j, pairs)
    assert [a is not None for a in out] == [True, True, True, False, False, False]
    assert len(endpoint.requests) == 2
    assert j.counts() == {"sent": 2, "answered": 2, "failed": 0, "cached": 1, "overBudget": 3, "skipped": 0}
    assert run_judge(engine, j, [("More.", "Still more.")]) == [None]  # the budget is per run, not per call
    assert len(endpoint.requests) == 2 and j.over_budget == 4


# --- timeouts and unreachable endpoints --------------------------------------------------------------

def test_a_slow_answer_times_out_quickly_and_falls_back(endpoint, engine):
    endpoint.reply = lambda body: (200, verdict("duplicate", "late"), 3.0)
    j = Judge(JudgeConfig(url=endpoint.url, timeout_s=0.2))
    t0 = time.monotonic()
    assert run_judge(engine, j, [(LINT, PUSH)]) == [None]
    assert time.monotonic() - t0 < 1.5
    assert (j.sent, j.failed) == (1, 1) and j.errors == ["no answer within 0.2 s"]


def test_a_timeout_does_not_stop_the_run_but_three_in_a_row_do(endpoint, engine):
    slow = {"Statement 0.", "Statement 2.", "Statement 3.", "Statement 4."}
    endpoint.reply = lambda body: (200, verdict("neither", "fine"),
                                   3.0 if any(s in body["messages"][1]["content"] for s in slow) else 0.0)
    j = Judge(JudgeConfig(url=endpoint.url, timeout_s=0.2))
    pairs = [(f"Statement {i}.", f"Zother {i}.") for i in range(7)]
    out = run_judge(engine, j, pairs)
    # 0 times out, 1 answers (the count restarts), 2, 3, 4 time out: the judge gives up; 5, 6 not sent
    assert [a.verdict if a else None for a in out] == [None, "neither", None, None, None, None, None]
    assert len(endpoint.requests) == 5
    assert j.counts() == {"sent": 5, "answered": 1, "failed": 4, "cached": 0, "overBudget": 0, "skipped": 2}


def test_connection_refused_falls_back_and_stops_after_three(engine):
    j = Judge(JudgeConfig(url=f"http://127.0.0.1:{closed_port()}"))
    t0 = time.monotonic()
    assert run_judge(engine, j, [(f"Statement {i}.", f"Other {i}.") for i in range(5)]) == [None] * 5
    assert time.monotonic() - t0 < 2
    assert j.counts() == {"sent": 3, "answered": 0, "failed": 3, "cached": 0, "overBudget": 0, "skipped": 2}
    assert j.errors[0].startswith("cannot reach http://127.0.0.1:") and "refused" in j.errors[0]
    assert j.errors[1] == "3 connection failures or timeouts in a row: nothing more sent this run"


# --- settings ----------------------------------------------------------------------------------------

def test_config_file_is_read_from_the_user_settings_folder(tmp_path, monkeypatch):
    from memtui.userconfig import config_dir, config_file

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_file() == tmp_path / "memtui" / "config.yaml" == config_dir() / "config.yaml"
    assert load_judge_config() is None                      # no file
    config_file().parent.mkdir()
    config_file().write_text("other: 1\n")
    assert load_judge_config() is None                      # no judge section
    config_file().write_text(yaml.safe_dump({"judge": {"url": "http://127.0.0.1:11434", "model": "qwen2.5:7b",
                                                       "budget": 10, "timeout_s": 5, "api_key_env": "JUDGE_KEY"}}))
    assert load_judge_config() == JudgeConfig("http://127.0.0.1:11434", "qwen2.5:7b", 10, 5, "JUDGE_KEY")
    config_file().write_text("judge: {url: 'http://h:8080/v1'}\n")
    assert load_judge_config() == JudgeConfig("http://h:8080/v1", "default", 50, 20.0, None)


@pytest.mark.parametrize("text, field", [
    ("judge: {url: 'ftp://h'}", "judge.url:"),
    ("judge: {url: 'http://me:sk-live-abc123@h'}", "judge.url: must not hold a user name or password"),
    ("judge: {url: 'http://h:99999'}", "judge.url: not a valid URL"),
    ("judge: {model: m}", "judge.url: missing"),
    ("judge: {url: 'http://h', budget: ten}", "judge.budget:"),
    ("judge: {url: 'http://h', budget: -1}", "judge.budget:"),
    ("judge: {url: 'http://h', budget: true}", "judge.budget:"),
    ("judge: {url: 'http://h', timeout_s: 0}", "judge.timeout_s:"),
    ("judge: {url: 'http://h', model: ''}", "judge.model:"),
    ("judge: {url: 'http://h', api_key_env: 'sk-live-abc123'}", "judge.api_key_env:"),
    ("judge: {url: 'http://h', temperature: 0}", "judge.temperature: unknown setting"),
    ("judge: [http://h]", "judge: must be a mapping"),
    ("judge: {url: 'http://h'\n", "not valid YAML"),
    ("- judge\n", "must be a YAML mapping"),
])
def test_config_errors_name_the_file_and_the_field(tmp_path, text, field):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        load_judge_config(path)
    assert str(err.value).startswith(f"{path}: ") and field in str(err.value)
    assert "sk-live-abc123" not in str(err.value)  # a key written where its name belongs is not echoed


def test_flags_override_the_file(tmp_path):
    path = tmp_path / "config.yaml"
    assert resolve_judge_config(None, None, path) is None
    assert resolve_judge_config("http://a:1", None, path) == JudgeConfig("http://a:1")
    with pytest.raises(ValueError, match="--judge-model needs --judge URL"):
        resolve_judge_config(None, "m", path)
    path.write_text("judge: {url: 'https://api.example.com/v1', model: big, budget: 7, api_key_env: K}\n")
    assert resolve_judge_config(None, None, path) == JudgeConfig("https://api.example.com/v1", "big", 7, 20.0, "K")
    assert resolve_judge_config(None, "small", path).model == "small"
    # the same server keeps the key; another server never gets it
    assert resolve_judge_config("https://api.example.com:443/other", None, path).api_key_env == "K"
    assert resolve_judge_config("http://127.0.0.1:8080", "tiny", path) == JudgeConfig("http://127.0.0.1:8080", "tiny", 7)
    with pytest.raises(ValueError, match="^--judge: must be an http"):
        resolve_judge_config("localhost:8080", None, path)


# --- memtui maintain --judge -------------------------------------------------------------------------

def _tiny_store(tmp_path) -> str:
    from memtui.cli import app as memtui_app

    db = str(tmp_path / "s.db")
    records = [{"memoryId": f"m{i}", "type": "code_fact", "statement": s,
                "scope": {"tenantId": "acme", "repositoryId": "svc"}} for i, s in enumerate([REDIS, MEMCACHED, LINT])]
    (tmp_path / "m.yaml").write_text(yaml.safe_dump({"memories": records}))
    out = CliRunner().invoke(memtui_app, ["import", str(tmp_path / "m.yaml"), "--db", db])
    assert out.exit_code == 0, out.output
    return db


def test_maintain_with_an_unreachable_judge_completes(tmp_path, monkeypatch):
    from memtui.cli import app as memtui_app
    from memtui.maintenance import conflicts

    db = _tiny_store(tmp_path)
    seen = []
    real = conflicts.detect_conflicts

    def spy(*args, **kwargs):
        seen.append(kwargs.get("judge"))
        return real(*args, **kwargs)

    monkeypatch.setattr(conflicts, "detect_conflicts", spy)
    out = CliRunner().invoke(memtui_app, ["maintain", "--only", "conflicts", "--judge", "http://127.0.0.1:1",
                                          "--judge-model", "tiny", "--db", db])
    assert out.exit_code == 0, out.output
    assert seen == [JudgeConfig(url="http://127.0.0.1:1", model="tiny")]
    assert "maintain: judge for uncertain pairs: http://127.0.0.1:1/v1/chat/completions (model tiny" in out.output
    assert "conflicts: selected 3" in out.output

    out = CliRunner().invoke(memtui_app, ["maintain", "--only", "conflicts", "--db", db])  # no judge anywhere
    assert out.exit_code == 0, out.output
    assert seen[-1] is None and "judge" not in out.output


def test_maintain_reports_a_bad_judge_setting(tmp_path, monkeypatch):
    from memtui.cli import app as memtui_app

    db = _tiny_store(tmp_path)
    out = CliRunner().invoke(memtui_app, ["maintain", "--judge", "localhost:11434", "--db", db])
    assert out.exit_code == 2 and "--judge: must be an http:// or https:// URL" in out.output
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    (tmp_path / "cfg" / "memtui").mkdir(parents=True)
    (tmp_path / "cfg" / "memtui" / "config.yaml").write_text("judge: {url: 'http://h', timeout_s: -3}\n")
    out = CliRunner().invoke(memtui_app, ["maintain", "--db", db])
    assert out.exit_code == 2
    assert f"{tmp_path / 'cfg' / 'memtui' / 'config.yaml'}: judge.timeout_s:" in out.output

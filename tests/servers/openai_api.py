"""A Chat Completions API on 127.0.0.1 for tests: scripted replies, errors, delays, and a record of every call.

It speaks the wire format the openai client expects (POST {base}/chat/completions), so tests drive the
real client over a real socket. Replies come from a queue (`script`) first, then from `responder`.
It answers the way real servers do: reasoning beside the content (vLLM's `reasoning_content`) with
`completion_tokens_details.reasoning_tokens`, structured output taken, ignored or refused with a 400,
and, on request, a 500 every Nth call. REPLY_SHAPES are the ways real models format a summary.
"""
from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from servers.loopback import LoopbackServer
from store.report.markdown import SECTIONS

# The longest a gated reply waits for its gate (a test that forgot to open it still ends).
GATE_LIMIT = 120.0


@dataclass
class Reply:
    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (for timeouts and concurrency)
    # With a gate, nothing is answered until the test sets it: "still working" without guessing how long that takes.
    gate: threading.Event | None = None
    raw: bytes | None = None  # sent as the body verbatim, e.g. broken JSON
    usage: bool = True  # some servers leave usage out
    reasoning: str = ""  # sent beside the content, as vLLM's reasoning parsers do
    reasoning_tokens: bool = True  # reported in usage.completion_tokens_details (vLLM does not always)


@dataclass
class Recorded:
    body: dict[str, Any]
    headers: dict[str, str]  # names in lower case
    at: float  # time.monotonic() on arrival

    @property
    def user(self) -> str:
        """The first user message: the PR's prompt, also in a follow-up."""
        return next((m["content"] for m in self.body.get("messages", []) if m["role"] == "user"), "")

    @property
    def last(self) -> str:
        """The last message: the question in a follow-up such as a repair prompt."""
        messages = self.body.get("messages") or [{"content": ""}]
        return messages[-1]["content"]

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.body.get("messages", []) if m["role"] == "system"), "")

    @property
    def wants_json(self) -> bool:
        return (self.body.get("response_format") or {}).get("type") == "json_schema"


def estimate(text: str) -> int:
    """A stand-in tokenizer: about four characters a token."""
    return max(1, len(text) // 4)


def rate_limited(retry_after: str = "0.2") -> Reply:
    body = {"error": {"message": "Rate limit reached", "type": "rate_limit_error", "code": "rate_limit_exceeded"}}
    return Reply(status=429, headers={"Retry-After": retry_after}, raw=json.dumps(body).encode())


# How servers without structured output refuse a request for it: OpenAI's older models, and vLLM
# versions whose request model knows only "text" and "json_object" (the pydantic error, verbatim).
SCHEMA_REFUSALS = {
    "openai": {"error": {
        "message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
        "type": "invalid_request_error", "param": "response_format", "code": None}},
    "vllm": {
        "object": "error", "type": "BadRequestError", "param": None, "code": 400,
        "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                   "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]"},
}
SERVER_ERROR = {"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}


def summary_sections(pr_number: int | str = "?") -> dict[str, str]:
    """The four sections the fake model writes about a PR, by section key."""
    return {
        "what_changed": f"The change reworks how PR {pr_number} batches requests so that the scheduler sees them earlier.",
        "impact": "Batches form one step sooner, which lowers time to first token for bursts of short prompts.",
        "risks": "Very large batches may now hit memory limits sooner on small GPUs.",
        "insights": "Watch the scheduler metrics after upgrading; the tests cover the common paths.",
    }


def summary_reply(pr_number: int | str = "?", kind: str = "substantial") -> str:
    """A reply in the four-section format prdigest asks for."""
    return _markdown(summary_sections(pr_number), kind, lambda i, label: f"## {label}", f"TYPE: {kind}")


def summary_json(pr_number: int | str = "?", kind: str = "substantial") -> str:
    """A reply in the JSON schema prdigest asks for with structured output."""
    return _json(summary_sections(pr_number), kind)


def _json(words: dict[str, str], kind: str) -> str:
    return json.dumps({"type": kind, **{"_".join(label.lower().split()): words[key] for key, label in SECTIONS}})


def _markdown(
    words: dict[str, str], kind: str, heading: Callable[[int, str], str], type_line: str, type_last: bool = False
) -> str:
    sections = [f"{heading(index, label)}\n{words[key]}" for index, (key, label) in enumerate(SECTIONS, 1)]
    return "\n\n".join(sections + [type_line] if type_last else [type_line] + sections)


def _as_asked(words: dict[str, str], kind: str) -> str:
    return _markdown(words, kind, lambda i, label: f"## {label}", f"TYPE: {kind}")


_THINKING = "Okay, the user wants a summary of this PR. The diff touches the scheduler, so the type is substantial."

# Each shape a real model gives a summary in, from the sections (by key) and the type.
REPLY_SHAPES: dict[str, Callable[[dict[str, str], str], Reply]] = {
    "as asked": lambda w, k: Reply(_as_asked(w, k)),
    "preamble and closing remarks": lambda w, k: Reply(
        f"Here is the summary of the pull request:\n\n{_as_asked(w, k)}\n\n"
        "Let me know if you would like more detail on any part."),
    "think block": lambda w, k: Reply(f"<think>\n{_THINKING}\n</think>\n\n{_as_asked(w, k)}"),
    "template-opened think block": lambda w, k: Reply(f"{_THINKING}\n</think>\n\n{_as_asked(w, k)}"),
    "reasoning beside the content": lambda w, k: Reply(_as_asked(w, k), reasoning=_THINKING),
    "bold headings": lambda w, k: Reply(_markdown(w, k, lambda i, label: f"**{label}**", f"**Type:** {k.upper()}")),
    "bold headings with text": lambda w, k: Reply(_markdown(
        w, k, lambda i, label: f"**{label}:**", f"Type: {k.capitalize()}").replace(":**\n", ":** ")),
    "### headings with colons": lambda w, k: Reply(_markdown(w, k, lambda i, label: f"### {label}:", f"TYPE: {k}")),
    "numbered headings": lambda w, k: Reply(_markdown(w, k, lambda i, label: f"{i}. {label}", f"Type: {k.upper()}")),
    "fenced": lambda w, k: Reply(f"```markdown\n{_as_asked(w, k)}\n```"),
    "type last in capitals": lambda w, k: Reply(
        _markdown(w, k, lambda i, label: f"## {label}", f"Type: {k.upper()}", type_last=True)),
    "JSON object": lambda w, k: Reply(_json(w, k)),
    "fenced JSON with a preamble": lambda w, k: Reply(f"Sure! Here is the JSON:\n```json\n{_json(w, k)}\n```"),
    "everything at once": lambda w, k: Reply(
        f"<think>{_THINKING}</think>\nSure! Here's a summary of the PR:\n\n```\n"
        + _markdown(w, k, lambda i, label: f"### {i}. **{label.title()}:**", f"**TYPE:** `{k.upper()}`", type_last=True)
        + "\n```\n\n---\nI hope this helps! Feel free to ask for more detail.",
        reasoning="The user message holds one pull request."),
}

_PR_NUMBER = re.compile(r"^Number: #(\d+)$", re.MULTILINE)


def _pr_number(request: Recorded) -> str:
    found = _PR_NUMBER.search(request.user)
    return found.group(1) if found else "?"


def summarizing_responder(request: Recorded) -> Reply:
    """A well-formed summary naming the PR number found in the prompt: JSON when a schema is asked for."""
    number = _pr_number(request)
    return Reply(summary_json(number) if request.wants_json else summary_reply(number))


def rotating_responder(
    sections: Callable[[str], dict[str, str]] = summary_sections,
) -> Callable[[Recorded], Reply]:
    """Each request gets the next of REPLY_SHAPES, with `sections(PR number)`; a request with a
    schema that the server takes gets JSON, as constrained decoding guarantees."""
    shapes = itertools.cycle(REPLY_SHAPES.values())
    lock = threading.Lock()

    def respond(request: Recorded) -> Reply:
        words = sections(_pr_number(request))
        if request.wants_json:
            return Reply(_json(words, "substantial"))
        with lock:
            shape = next(shapes)
        return shape(words, "substantial")

    return respond


class FakeOpenAI(LoopbackServer):
    """Start with `with FakeOpenAI() as api:`; point the client at `api.base_url`."""

    def __init__(
        self,
        responder: Callable[[Recorded], Reply] = summarizing_responder,
        *,
        json_schema: str = "take",
        error_every: int = 0,
    ) -> None:
        """`json_schema`: take (answer in the schema), ignore (answer as if not asked: some servers
        drop the parameter) or a key of SCHEMA_REFUSALS (refuse with that server's 400).
        `error_every`: answer every Nth call with a 500 (the client's retries of it are answered)."""
        self.responder = responder
        self.json_schema = json_schema
        self.error_every = error_every
        self.requests: list[Recorded] = []
        self.calls = 0  # requests other than the client's retries
        self.tokens_in = 0
        self.tokens_out = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        super().__init__(self._handler())

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def script(self, *replies: Reply | str) -> None:
        """Queue replies for the next calls, in order (a str is a 200 reply with that text)."""
        with self._lock:
            self._script.extend(Reply(r) if isinstance(r, str) else r for r in replies)

    def together(
        self, count: int, reply: Callable[[Recorded], Reply], alone: int = 0, timeout: float = 30.0
    ) -> Callable[[Recorded], Reply]:
        """A responder answering nothing until `count` requests have been in flight at once, then `reply`.

        A client allowed `count` calls at a time then shows it however slowly its requests arrive (a busy
        machine); a client that allows fewer waits `timeout` once, and max_in_flight stays below `count`.
        The first `alone` requests are answered at once: a client that sends one by itself first.
        """
        deadline: list[float] = []
        seen = itertools.count(1)

        def respond(request: Recorded) -> Reply:
            with self._lock:
                by_itself = next(seen) <= alone
                if not by_itself and not deadline:
                    deadline.append(time.monotonic() + timeout)
            while not by_itself and self.max_in_flight < count and time.monotonic() < deadline[0]:
                time.sleep(0.01)
            return reply(request)

        return respond

    def _next_reply(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            # A call is a request the client made afresh; its retries (x-stainless-retry-count > 0) are not calls.
            self.calls += request.headers.get("x-stainless-retry-count", "0") == "0"
            if self.error_every and request.headers.get("x-stainless-retry-count", "0") == "0" \
                    and self.calls % self.error_every == 0:
                return Reply(status=500, raw=json.dumps(SERVER_ERROR).encode())
            if request.wants_json and self.json_schema in SCHEMA_REFUSALS:
                return Reply(status=400, raw=json.dumps(SCHEMA_REFUSALS[self.json_schema]).encode())
            scripted = self._script.popleft() if self._script else None
        if scripted:
            return scripted
        if request.wants_json and self.json_schema == "ignore":
            request = Recorded({k: v for k, v in request.body.items() if k != "response_format"}, request.headers, request.at)
        return self.responder(request)

    def _answer(self, request: Recorded, reply: Reply) -> bytes:
        if reply.raw is not None:
            return reply.raw
        prompt = sum(estimate(m.get("content") or "") for m in request.body.get("messages", []))
        reasoning = estimate(reply.reasoning) if reply.reasoning else 0
        completion = estimate(reply.text) + reasoning
        with self._lock:
            self.tokens_in += prompt
            self.tokens_out += completion
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        body: dict[str, Any] = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.body.get("model", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }
        if reply.usage:
            body["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
            if reply.reasoning and reply.reasoning_tokens:
                body["usage"]["completion_tokens_details"] = {"reasoning_tokens": reasoning}
        return json.dumps(body).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}', {})
                    return
                headers = {name.lower(): value for name, value in self.headers.items()}
                request = Recorded(json.loads(raw or b"{}"), headers, time.monotonic())
                reply = api._next_reply(request)
                try:
                    if reply.gate is not None:
                        reply.gate.wait(GATE_LIMIT)
                    time.sleep(reply.delay)
                    self._send(reply.status, api._answer(request, reply), reply.headers)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout); nothing to answer
                finally:
                    with api._lock:
                        api.in_flight -= 1

            def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        return Handler

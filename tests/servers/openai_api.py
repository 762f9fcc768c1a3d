"""A Chat Completions API on 127.0.0.1 for tests: scripted replies, errors, delays, and a record of every call.

It speaks the wire format the openai client expects (POST {base}/chat/completions), so tests drive the
real client over a real socket. Replies come from a queue (`script`) first, then from `responder`.
"""
from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from store.report_markdown import SECTIONS

from servers.loopback import LoopbackServer


@dataclass
class Reply:
    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (for timeouts and concurrency)
    raw: bytes | None = None  # sent as the body verbatim, e.g. broken JSON
    usage: bool = True  # some servers leave usage out


@dataclass
class Recorded:
    body: dict[str, Any]
    headers: dict[str, str]  # names in lower case
    at: float  # time.monotonic() on arrival

    @property
    def user(self) -> str:
        return next((m["content"] for m in self.body.get("messages", []) if m["role"] == "user"), "")

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.body.get("messages", []) if m["role"] == "system"), "")


def estimate(text: str) -> int:
    """A stand-in tokenizer: about four characters a token."""
    return max(1, len(text) // 4)


def rate_limited(retry_after: str = "0.2") -> Reply:
    body = {"error": {"message": "Rate limit reached", "type": "rate_limit_error", "code": "rate_limit_exceeded"}}
    return Reply(status=429, headers={"Retry-After": retry_after}, raw=json.dumps(body).encode())


def summary_reply(pr_number: int | str = "?", kind: str = "substantial") -> str:
    """A reply in the four-section format prdigest asks for."""
    words = {
        "what_changed": f"The change reworks how PR {pr_number} batches requests so that the scheduler sees them earlier.",
        "impact": "Batches form one step sooner, which lowers time to first token for bursts of short prompts.",
        "risks": "Very large batches may now hit memory limits sooner on small GPUs.",
        "insights": "Watch the scheduler metrics after upgrading; the tests cover the common paths.",
    }
    parts = [f"TYPE: {kind}"] + [f"## {label}\n{words[key]}" for key, label in SECTIONS]
    return "\n\n".join(parts)


_PR_NUMBER = re.compile(r"^Number: #(\d+)$", re.MULTILINE)


def summarizing_responder(request: Recorded) -> Reply:
    """A well-formed summary naming the PR number found in the prompt."""
    found = _PR_NUMBER.search(request.user)
    return Reply(summary_reply(found.group(1) if found else "?"))


class FakeOpenAI(LoopbackServer):
    """Start with `with FakeOpenAI() as api:`; point the client at `api.base_url`."""

    def __init__(self, responder: Callable[[Recorded], Reply] = summarizing_responder) -> None:
        self.responder = responder
        self.requests: list[Recorded] = []
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


    def _next_reply(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            scripted = self._script.popleft() if self._script else None
        return scripted or self.responder(request)

    def _answer(self, request: Recorded, reply: Reply) -> bytes:
        if reply.raw is not None:
            return reply.raw
        prompt = sum(estimate(m.get("content") or "") for m in request.body.get("messages", []))
        completion = estimate(reply.text)
        with self._lock:
            self.tokens_in += prompt
            self.tokens_out += completion
        body: dict[str, Any] = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.body.get("model", ""),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": reply.text}, "finish_reason": "stop"}
            ],
        }
        if reply.usage:
            body["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        return json.dumps(body).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}', {})
                    return
                headers = {name.lower(): value for name, value in self.headers.items()}
                request = Recorded(json.loads(raw or b"{}"), headers, time.monotonic())
                reply = api._next_reply(request)
                try:
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

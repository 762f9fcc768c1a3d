"""How `prdigest serve --http` holds up when whoever can reach its port misbehaves.

    python bench/http_front.py [--hold 30] [--big 100] [--idle 200] [--commands 300]

Starts the real served process on 127.0.0.1 (an empty store, the fake Slack of
tests/servers) and fires, one kind after the other: unsigned 10 MB posts, idle
connections held open, a burst of concurrent signed slash commands, and every
malformed request of the tests (each unsigned, signed, and signed with a bad
timestamp; bad Content-Length and timestamp headers). It prints how each kind
was answered, the ack latency of the burst, the served process's peak RSS, and
how many tracebacks its log holds. Traffic goes to 127.0.0.1 only; every loop
is bounded.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from servers.slack_api import (  # noqa: E402
    BAD_LENGTHS,
    BAD_TIMESTAMPS,
    BOT_TOKEN,
    MALFORMED,
    SIGNING_SECRET,
    FakeSlack,
    signed_headers,
    signed_raw,
    slash_command,
)

BIG = 10 * 1024 * 1024
PIECE = 64 * 1024
ACK_LIMIT = 3.0  # Slack's


class Served:
    """The `prdigest serve --http` process and every line it logged."""

    def __init__(self, db_path: Path, slack: FakeSlack) -> None:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "SLACK_", "OPENAI_", "GITHUB_"))},
               "PRDIGEST_DB": str(db_path), "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
               "PRDIGEST_SLACK_API_URL": slack.api_url, "PRDIGEST_POLL_MINUTES": "0"}  # no GitHub polling
        self.process = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--http", "0", "--host", "127.0.0.1"],
                                        cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        for line in self.process.stderr:  # type: ignore[union-attr]
            self.lines.append(line)
            found = re.search(r"serving Slack requests at http://[^:]+:(\d+)", line)
            if found:
                self.port = int(found.group(1))
                break
        else:
            raise SystemExit(f"serve did not start: {''.join(self.lines)}")
        threading.Thread(target=lambda: self.lines.extend(self.process.stderr), daemon=True).start()  # type: ignore[arg-type]

    def peak_rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024  # type: ignore[union-attr]

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=30)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def request(fields: dict[str, str], body: bytes = b"", length: str | None = None) -> bytes:
    """A POST to /slack/events as raw bytes; header values may be any text (sent as UTF-8)."""
    head = {"Host": "127.0.0.1", **fields, "Content-Length": str(len(body)) if length is None else length,
            "Connection": "close"}
    lines = "".join(f"{name}: {value}\r\n" for name, value in head.items())
    return f"POST /slack/events HTTP/1.1\r\n{lines}\r\n".encode() + body


def status_of(sock: socket.socket) -> str:
    """The status code answering on `sock`, or what happened instead."""
    try:
        data = sock.recv(4096)
    except (ConnectionResetError, TimeoutError) as exc:
        return type(exc).__name__
    return data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/") else "closed, no answer"


def exchange(served: Served, data: bytes) -> str:
    with served.connect() as sock:
        sock.sendall(data)
        return status_of(sock)


def big_post(served: Served) -> tuple[str, int]:
    """An unsigned 10 MB post sent the way a client streams it, reading whatever answer comes first.
    Returns the answer and how much of the body the server let through before it."""
    head = request({"Content-Type": "application/json"}, length=str(BIG))
    sent = 0
    with served.connect() as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(head)
            while sent < BIG and not select.select([sock], [], [], 0)[0]:
                sent += sock.send(b"x" * min(PIECE, BIG - sent))
        return status_of(sock), sent


def idle_connections(served: Served, count: int, hold: float) -> list[float | None]:
    """Opens `count` connections that send nothing; for each, the seconds until the server closed it (None: it did not)."""
    socks = [served.connect() for _ in range(count)]
    started = time.monotonic()
    closed: dict[socket.socket, float] = {}
    while len(closed) < count and time.monotonic() - started < hold:
        readable, _, _ = select.select([s for s in socks if s not in closed], [], [], 0.5)
        for sock in readable:
            with contextlib.suppress(ConnectionResetError):
                sock.recv(1)
            closed[sock] = time.monotonic() - started
    for sock in socks:
        sock.close()
    return [closed.get(sock) for sock in socks]


def command_burst(served: Served, slack: FakeSlack, count: int) -> tuple[Counter[str], list[float]]:
    """`count` signed `/prdigest today`, sent together; how each was answered and how long each ack took."""
    bodies = [slash_command("today", slack.response_url(f"burst-{n}")) for n in range(count)]
    data = [request(signed_headers(body, kind), body.encode()) for body, kind in bodies]
    start = threading.Barrier(count)

    def one(raw: bytes) -> tuple[str, float]:
        start.wait()
        began = time.perf_counter()
        answer = exchange(served, raw)
        return answer, time.perf_counter() - began

    with ThreadPoolExecutor(count) as pool:
        results = list(pool.map(one, data))
    return Counter(answer for answer, _ in results), sorted(seconds for _, seconds in results)


def malformed(served: Served) -> Counter[str]:
    """Every malformed body unsigned, signed and with a bad timestamp, then the bad header values."""
    answers: Counter[str] = Counter()
    for body, kind in MALFORMED:
        for fields in ({"Content-Type": kind}, signed_raw(body, kind), signed_raw(body, kind, "abc")):
            answers[exchange(served, request(fields, body))] += 1
    for length in BAD_LENGTHS:
        answers[exchange(served, request({"Content-Type": "application/json"}, b"abc", length=length))] += 1
    body, kind = slash_command("today", "http://127.0.0.1:9/none")
    for stamp in BAD_TIMESTAMPS:
        fields = {**signed_headers(body, kind), "X-Slack-Request-Timestamp": stamp}
        answers[exchange(served, request(fields, body.encode()))] += 1
    return answers


def percentile(values: list[float], share: float) -> float:
    return values[min(len(values) - 1, int(len(values) * share))]


def timed(what: str, job: Callable[[], str]) -> None:
    began = time.perf_counter()
    line = job()
    print(f"{what:<34} {line}  ({time.perf_counter() - began:.1f} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--big", type=int, default=100, help="unsigned 10 MB posts")
    parser.add_argument("--idle", type=int, default=200, help="idle connections")
    parser.add_argument("--hold", type=float, default=30, help="seconds the idle connections are held")
    parser.add_argument("--commands", type=int, default=300, help="concurrent signed slash commands")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="prdigest-http-front-"))
    with FakeSlack() as slack:
        served = Served(work / "bench.db", slack)
        try:
            run(served, slack, args)
        finally:
            served.stop()
    tracebacks = sum("Traceback" in line for line in served.lines)
    print(f"{'tracebacks in the log':<34} {tracebacks} (of {len(served.lines)} lines)")


def run(served: Served, slack: FakeSlack, args: argparse.Namespace) -> None:
    def big() -> str:
        with ThreadPoolExecutor(args.big) as pool:
            results = list(pool.map(lambda _: big_post(served), range(args.big)))
        most = max(sent for _, sent in results) / 1024 / 1024
        return f"{dict(Counter(answer for answer, _ in results))}; at most {most:.1f} MB of a body in socket buffers by then"

    def idle() -> str:
        closed = [seconds for seconds in idle_connections(served, args.idle, args.hold) if seconds is not None]
        latest = f", the last after {max(closed):.1f} s" if closed else ""
        return f"{len(closed)}/{args.idle} closed by the server within {args.hold:g} s{latest}"

    def burst() -> str:
        answers, seconds = command_burst(served, slack, args.commands)
        in_time = sum(s <= ACK_LIMIT for s in seconds)
        slack.wait_for(lambda s: len(s.calls_to("response_url")) >= args.commands, timeout=120)
        return (f"{dict(answers)}; {in_time}/{args.commands} acked within {ACK_LIMIT:g} s; "
                f"ack p50 {percentile(seconds, 0.5) * 1000:.0f} ms, p99 {percentile(seconds, 0.99) * 1000:.0f} ms, "
                f"max {seconds[-1] * 1000:.0f} ms; {len(slack.calls_to('response_url'))} replies at response_url")

    timed(f"{args.big} unsigned 10 MB posts", big)
    timed(f"{args.idle} idle connections", idle)
    timed(f"{args.commands} concurrent signed commands", burst)
    timed("malformed requests", lambda: str(dict(malformed(served))))
    print(f"{'peak RSS of the served process':<34} {served.peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()

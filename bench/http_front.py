"""How `prdigest serve --http` holds up when whoever can reach its port misbehaves.

    python bench/http_front.py [--trickle 1000] [--beyond 3000] [--bodies 1000] [--commands 300] [--hold 30]

Starts the real served process on 127.0.0.1 (an empty store, the fake Slack of
tests/servers) and, one kind after the other: sends signed `/prdigest help`
commands, one every 50 ms, while 1,000 connections trickle a byte every 2 s
(each opened again when the server closes it), then while 3,000 do (past the
server's limit of 2,048 connections), then (one every 5 ms: they pass in a second) while
1,000 unsigned 1 MB bodies arrive 100 at a time, then while as many arrive with
a forged signature, which are read whole;
fires a burst of signed commands all at once; then unsigned 10 MB posts, idle
connections, and every malformed request of the tests (each unsigned, signed,
and signed with a bad timestamp; bad Content-Length and timestamp headers). It
prints how each kind was answered, how fast the signed commands were acked
(Slack waits 3 s), the served process's peak RSS, and how many tracebacks its
log holds. Traffic goes to 127.0.0.1 only; every loop is bounded.
"""
from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import re
import select
import selectors
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
from typing import Any

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
from slow_clients import SlowClients  # noqa: E402

from bot.slack.http_server import REQUEST_SECONDS  # noqa: E402

BIG = 10 * 1024 * 1024
BODY = 1024 * 1024
PIECE = 64 * 1024
ACK_LIMIT = 3.0  # Slack's
# A header that never ends, sent a byte at a time: only the deadline on the whole request closes it.
TRICKLE = b"POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"a" * 100_000


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

    def cpu_seconds(self) -> float:
        """CPU time the served process has used so far, its threads together."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def sockets(self) -> int:
        """The sockets the served process holds open: its connections, and its listening socket."""
        count = 0
        for fd in Path(f"/proc/{self.process.pid}/fd").iterdir():
            with contextlib.suppress(OSError):  # closed meanwhile
                count += os.readlink(fd).startswith("socket:")
        return count

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


def big_post(served: Served, size: int, fields: dict[str, str]) -> tuple[str, int]:
    """A post of a `size`-byte body sent the way a client streams it, reading whatever answer comes first.
    Returns the answer and how much of the body the server let through before it."""
    head = request({"Content-Type": "application/json", **fields}, length=str(size))
    sent = 0
    with served.connect() as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(head)
            while sent < size and not select.select([sock], [], [], 0)[0]:
                sent += sock.send(b"x" * min(PIECE, size - sent))
        return status_of(sock), sent


def big_posts(served: Served, count: int, size: int, concurrency: int, fields: Callable[[], dict[str, str]]) -> str:
    """`count` posts of `size` bytes, `concurrency` at a time; how they were answered."""
    with ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(lambda _: big_post(served, size, fields()), range(count)))
    most = max(sent for _, sent in results) / 1024 / 1024
    return f"{dict(Counter(answer for answer, _ in results))}; at most {most:.1f} MB of a body sent before the answer"


def forged() -> dict[str, str]:
    """Signature headers that pass every check but the signature itself, which needs the body."""
    return {"X-Slack-Request-Timestamp": str(int(time.time())), "X-Slack-Signature": "v0=" + "0" * 64}


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


def ack_seconds(served: Served, data: list[bytes]) -> tuple[Counter[str], list[float]]:
    """Sends every request of `data` on a connection of its own, all at once from one thread (non-blocking sockets,
    so the client costs little of the CPU it shares with the server); how each was answered, and the seconds from
    opening its connection to its status line, sorted."""
    selector = selectors.DefaultSelector()
    began: dict[socket.socket, float] = {}
    for raw in data:
        sock = socket.socket()
        sock.setblocking(False)
        began[sock] = time.perf_counter()
        sock.connect_ex(("127.0.0.1", served.port))
        selector.register(sock, selectors.EVENT_WRITE, raw)
    answers: Counter[str] = Counter()
    seconds = []
    deadline = time.monotonic() + 60
    while selector.get_map() and time.monotonic() < deadline:
        for key, events in selector.select(timeout=1):
            sock = key.fileobj  # type: ignore[assignment]
            if events & selectors.EVENT_WRITE:
                try:
                    sock.sendall(key.data)
                    selector.modify(sock, selectors.EVENT_READ)
                    continue
                except OSError as exc:  # the connection was refused or dropped
                    answers[type(exc).__name__] += 1
            else:
                answers[status_of(sock)] += 1
            seconds.append(time.perf_counter() - began[sock])
            selector.unregister(sock)
            sock.close()
    for key in list(selector.get_map().values()):
        answers["no answer within 60 s"] += 1
        key.fileobj.close()  # type: ignore[union-attr]
    return answers, sorted(seconds)


def signed_commands(slack: FakeSlack, count: int, prefix: str) -> list[bytes]:
    """`count` signed `/prdigest help` commands, each with a response_url of its own."""
    commands = [slash_command("help", slack.response_url(f"{prefix}-{n}")) for n in range(count)]
    return [request(signed_headers(body, kind), body.encode()) for body, kind in commands]


def acks_during(served: Served, slack: FakeSlack, busy: Callable[[], bool], every: float) -> str:
    """Signed commands sent one every `every` seconds for as long as `busy()` holds; how fast they were acked."""
    answers: Counter[str] = Counter()
    seconds: list[float] = []
    lock = threading.Lock()

    def one(raw: bytes) -> None:
        got, took = ack_seconds(served, [raw])
        with lock:
            answers.update(got)
            seconds.extend(took)

    with ThreadPoolExecutor(32) as pool:
        sent = 0
        while busy():
            pool.submit(one, *signed_commands(slack, 1, f"during-{time.monotonic_ns()}"))
            sent += 1
            time.sleep(every)
    return ack_line(answers, sorted(seconds), sent)


def replies(slack: FakeSlack, prefix: str) -> int:
    return sum((call.hook or "").startswith(prefix) for call in slack.calls_to("response_url"))


def ack_line(answers: Counter[str], seconds: list[float], sent: int) -> str:
    in_time = sum(s <= ACK_LIMIT for s in seconds)
    if not seconds:
        return f"{sent} signed commands: none answered ({dict(answers)})"
    return (f"{in_time}/{sent} signed commands acked within {ACK_LIMIT:g} s ({dict(answers)}): p50 "
            f"{percentile(seconds, 0.5) * 1000:.0f} ms, p99 {percentile(seconds, 0.99) * 1000:.0f} ms, "
            f"max {seconds[-1] * 1000:.0f} ms")


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


def timed(served: Served, what: str, job: Callable[[], str]) -> None:
    """Runs `job` and prints its line, with how long it took and the server's share of a core meanwhile."""
    began, cpu = time.perf_counter(), served.cpu_seconds()
    line = job()
    took = time.perf_counter() - began
    print(f"{what:<44} {line}  ({took:.1f} s; server CPU {(served.cpu_seconds() - cpu) / took:.0%} of a core)",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trickle", type=int, default=1000, help="connections trickling a byte every 2 s")
    parser.add_argument("--beyond", type=int, default=3000, help="as many again, past the connection limit (0: none)")
    parser.add_argument("--during", type=float, default=15, help="seconds of signed commands among the trickles")
    parser.add_argument("--bodies", type=int, default=1000, help="unsigned 1 MB bodies, and as many forged ones")
    parser.add_argument("--concurrency", type=int, default=100, help="1 MB bodies sent at once")
    parser.add_argument("--commands", type=int, default=300, help="signed slash commands in the burst")
    parser.add_argument("--big", type=int, default=100, help="unsigned 10 MB posts")
    parser.add_argument("--idle", type=int, default=200, help="idle connections")
    parser.add_argument("--hold", type=float, default=30, help="seconds the idle connections are held")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="prdigest-http-front-"))
    with FakeSlack() as slack:
        served = Served(work / "bench.db", slack)
        try:
            run(served, slack, args)
        finally:
            served.stop()
    tracebacks = sum("Traceback" in line for line in served.lines)
    print(f"{'tracebacks in the log':<44} {tracebacks} (of {len(served.lines)} lines)")


def trickle_clients(port: int, count: int, opened: Any, stop: Any, closed: Any) -> None:
    """In a process of its own, so that its thousands of sockets do not slow the client measuring the acks:
    `count` connections trickling a byte every 2 s until `stop` is set; the lifetimes of those closed go to `closed`."""
    with SlowClients(port, count, TRICKLE, piece=1, every=2) as slow:
        while not stop.wait(0.1):
            opened.value = slow.opened
    closed.put(slow.closed)


def trickling(served: Served, slack: FakeSlack, count: int, during: float) -> str:
    """Signed commands while `count` connections trickle; how fast they were acked, and what the server did."""
    spawn = multiprocessing.get_context("spawn")
    opened, stop, closed = spawn.Value("i", 0), spawn.Event(), spawn.Queue()
    clients = spawn.Process(target=trickle_clients, args=(served.port, count, opened, stop, closed), daemon=True)
    clients.start()
    while opened.value < count:
        time.sleep(0.1)
    time.sleep(REQUEST_SECONDS + 2)  # every first connection has met its deadline: reopening is under way
    held: list[int] = []
    until = time.monotonic() + during

    def busy() -> bool:
        if len(held) <= time.monotonic() - until + during:  # the server's sockets, once a second
            held.append(served.sockets())
        return time.monotonic() < until

    acks = acks_during(served, slack, busy, every=0.05)
    stop.set()
    lived = sorted(closed.get(timeout=60))
    clients.join(timeout=30)
    return (f"{acks}; the server held {min(held)}-{max(held)} sockets; {len(lived)} trickling connections closed "
            f"after {percentile(lived, 0.01):.1f}-{percentile(lived, 0.99):.1f} s (p1-p99), each opened again")


def run(served: Served, slack: FakeSlack, args: argparse.Namespace) -> None:
    def trickle(count: int) -> Callable[[], str]:
        return lambda: trickling(served, slack, count, args.during)

    def bodies(fields: Callable[[], dict[str, str]], every: float) -> Callable[[], str]:
        def job() -> str:
            with ThreadPoolExecutor(1) as pool:
                posted = pool.submit(big_posts, served, args.bodies, BODY, args.concurrency, fields)
                acks = acks_during(served, slack, lambda: not posted.done(), every)
                return f"{acks}; the bodies: {posted.result()}"
        return job

    def burst() -> str:
        answers, seconds = ack_seconds(served, signed_commands(slack, args.commands, "burst"))
        slack.wait_for(lambda s: replies(s, "burst-") >= args.commands, timeout=120)
        return f"{ack_line(answers, seconds, args.commands)}; {replies(slack, 'burst-')} replies at response_url"

    def idle() -> str:
        closed = [seconds for seconds in idle_connections(served, args.idle, args.hold) if seconds is not None]
        latest = f", the last after {max(closed):.1f} s" if closed else ""
        return f"{len(closed)}/{args.idle} closed by the server within {args.hold:g} s{latest}"

    timed(served, f"while {args.trickle} connections trickle", trickle(args.trickle))
    if args.beyond:
        timed(served, f"while {args.beyond} connections trickle", trickle(args.beyond))
    timed(served, f"while {args.bodies} unsigned 1 MB bodies arrive", bodies(dict, every=0.005))
    timed(served, f"while {args.bodies} forged-signature 1 MB bodies", bodies(forged, every=0.05))
    timed(served, f"a burst of {args.commands} signed commands", burst)
    timed(served, f"{args.big} unsigned 10 MB posts",
          lambda: big_posts(served, args.big, BIG, args.big, lambda: {}))
    timed(served, f"{args.idle} idle connections", idle)
    timed(served, "malformed requests", lambda: str(dict(malformed(served))))
    print(f"{'peak RSS of the served process':<44} {served.peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()

"""Slack's Socket Mode endpoint on 127.0.0.1: a minimal WebSocket server that hands the app envelopes.

The app asks apps.connections.open (FakeSlack answers with `url` once
`slack.socket_url` is set), connects here, gets `hello`, and then every
envelope sent with `send()`. Its acknowledgements are recorded by envelope id.
Enough of RFC 6455 for slack_sdk's built-in client: the handshake, text,
ping/pong and close frames, masked from the client and unmasked to it.
"""
from __future__ import annotations

import base64
import hashlib
import json
import socket
import struct
import threading
import time
import uuid
from typing import Any

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA


class FakeSocketMode:
    def __init__(self) -> None:
        self.acks: dict[str, dict[str, Any]] = {}
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._client: socket.socket | None = None
        self._changed = threading.Condition()
        self._send_lock = threading.Lock()
        self._stopped = False

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self._listener.getsockname()[1]}/link"

    def __enter__(self) -> FakeSocketMode:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped = True
        self._listener.close()
        if self._client:
            self._client.close()

    def wait_connected(self, timeout: float = 30.0) -> None:
        self._wait(lambda: self._client is not None, timeout, "the app never connected")

    def send(self, kind: str, payload: dict[str, Any], accepts_response_payload: bool = True) -> str:
        """Deliver an envelope (slash_commands, events_api, interactive); returns its id."""
        envelope_id = str(uuid.uuid4())
        envelope = {"envelope_id": envelope_id, "type": kind, "payload": payload,
                    "accepts_response_payload": accepts_response_payload}
        self._send_frame(TEXT, json.dumps(envelope).encode())
        return envelope_id

    def wait_ack(self, envelope_id: str, timeout: float = 30.0) -> dict[str, Any]:
        self._wait(lambda: envelope_id in self.acks, timeout, f"no ack for {envelope_id}")
        return self.acks[envelope_id]

    def _wait(self, predicate, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(what)
                self._changed.wait(left)

    # -- the connection

    def _accept(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except OSError:
            return
        key = _handshake_key(conn)
        accept = base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()
        conn.sendall(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept}\r\n\r\n".encode()
        )
        with self._changed:
            self._client = conn
            self._changed.notify_all()
        hello = {"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0PRDIGEST"},
                 "debug_info": {"host": "fake", "approximate_connection_time": 3600}}
        self._send_frame(TEXT, json.dumps(hello).encode())
        self._read_frames(conn)

    def _read_frames(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        while not self._stopped:
            try:
                head = reader.read(2)
            except OSError:
                return
            if len(head) < 2:
                return
            opcode, length = head[0] & 0x0F, head[1] & 0x7F
            if length == 126:
                length = struct.unpack("!H", reader.read(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", reader.read(8))[0]
            mask = reader.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            data = bytes(byte ^ mask[i % 4] for i, byte in enumerate(reader.read(length)))
            if opcode == PING:
                self._send_frame(PONG, data)
            elif opcode == TEXT:
                ack = json.loads(data)
                with self._changed:
                    self.acks[ack["envelope_id"]] = ack.get("payload") or {}
                    self._changed.notify_all()
            elif opcode == CLOSE:
                return

    def _send_frame(self, opcode: int, data: bytes) -> None:
        self.wait_connected()
        if len(data) < 126:
            header = struct.pack("!BB", 0x80 | opcode, len(data))
        elif len(data) < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 126, len(data))
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 127, len(data))
        with self._send_lock:
            assert self._client is not None
            self._client.sendall(header + data)


def _handshake_key(conn: socket.socket) -> str:
    request = b""
    while b"\r\n\r\n" not in request:
        request += conn.recv(4096)
    for line in request.decode().split("\r\n"):
        name, _, value = line.partition(":")
        if name.strip().lower() == "sec-websocket-key":
            return value.strip()
    raise ValueError("not a WebSocket handshake")

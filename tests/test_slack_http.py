"""End to end: the real `prdigest serve --http` process, signed requests over HTTP, the fake Slack recording replies."""
import json
import socket
import time
from datetime import datetime

import httpx
import pytest
from conftest import LA
from servers.github_api import FakeGitHub
from servers.slack_api import (
    BAD_LENGTHS,
    BAD_TIMESTAMPS,
    JSON,
    MALFORMED,
    FakeSlack,
    button_click,
    home_opened,
    mention_event,
    signed_headers,
    signed_raw,
    slash_command,
)
from slack_helpers import LOUD_TITLE, REPO, import_fixtures, make_pr, serve_http, shown

from store.db import open_db
from store.tables.prs import save_pr


@pytest.fixture(scope="module")
def bot(tmp_path_factory):
    """The bot as it runs in production, on a store holding the fixture reports and one older ROCm PR."""
    db_path = tmp_path_factory.mktemp("serve") / "prdigest.db"
    db = open_db(db_path)
    import_fixtures(db)
    save_pr(db, make_pr(4080, datetime(2026, 3, 6, 10, 0, tzinfo=LA), title="[ROCm] Older kernel fix", areas=["rocm"]))
    db.close()
    with FakeSlack() as slack, FakeGitHub({REPO: []}) as github:
        with serve_http(db_path, slack, PRDIGEST_REPOS=REPO, PRDIGEST_GITHUB_API_URL=github.url) as served:
            yield served


@pytest.fixture
def serve(bot):
    bot.slack.reset()
    return bot


REFUSED = "refused a request from 127.0.0.1: "  # the guard's one line per request it turns away


def test_slash_command_acks_fast_then_responds(serve):
    answer = serve.slack.hold("day")  # the answer cannot be delivered until the ack came
    try:
        response = serve.command("2026-03-08", "day")
        assert response.status_code == 200 and not serve.slack.responses("day")  # acknowledged without waiting for it
    finally:
        answer.set()
    serve.slack.wait_for(lambda s: len(s.responses("day")) >= 2)  # the day's summary, then its PRs
    reply, listed = serve.slack.responses("day")[:2]
    assert reply.params["response_type"] == "ephemeral" and reply.params["replace_original"] is False
    body = shown(reply.params)
    assert "*Acme: merged PRs for 2026-03-08 (PST)*" in body and "3 merged" in body
    assert LOUD_TITLE not in json.dumps([reply.params, listed.params]) and "&lt;!channel&gt;" in shown(listed.params)


def test_slow_commands_ack_with_a_note(serve):
    response = serve.command("ask what changed in rocm?", "ask")
    assert response.status_code == 200 and "Working on it" in response.text
    serve.slack.wait_for(lambda s: s.responses("ask"))
    body = shown(serve.slack.responses("ask")[0].params)
    assert "<https://github.com/acme/engine/pull/4102|#4102>" in body


def test_bad_input_gets_one_line_and_usage(serve):
    serve.command("area gardening", "bad")
    serve.slack.wait_for(lambda s: s.responses("bad"))
    text = serve.slack.responses("bad")[0].params["text"]
    assert text.startswith("unknown area 'gardening'") and "\nUsage: `/prdigest area NAME [when]`" in text


def test_bad_signature_and_stale_timestamp_are_refused(serve):
    serve.log()
    forged = serve.command("today", "forged", secret="not-the-secret")
    stale = serve.command("today", "stale", timestamp=int(time.time()) - 6 * 60)
    unsigned = httpx.post(serve.url, content=slash_command("today", "x")[0], timeout=10,
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert forged.status_code == stale.status_code == unsigned.status_code == 401
    # Each was refused at the door, with its one log line, and so never reached a listener that could answer.
    serve.log_until(lambda lines: sum(REFUSED in line for line in lines) >= 3, "three refusals in the log")
    assert serve.slack.calls_to("response_url") == []


def test_mention_is_answered_in_its_thread_and_follow_ups_keep_context(serve):
    serve.send(*mention_event("<@UPRDIGEST> what merged on 2026-03-06?", ts="1710000000.000100"))
    serve.slack.wait_for(lambda s: len(s.calls_to("chat.update")) == 1)
    [placeholder] = serve.slack.posts("C0REPORTS")
    assert placeholder.params["thread_ts"] == "1710000000.000100" and "Looking" in placeholder.params["text"]
    [update] = serve.slack.calls_to("chat.update")
    assert "<https://github.com/acme/engine/pull/4080|#4080>" in shown(update.params)

    # "and on ROCm?" alone would find every ROCm PR; in this thread it means ROCm on that day.
    serve.send(*mention_event("<@UPRDIGEST> and on ROCm?", ts="1710000000.000200", thread_ts="1710000000.000100"))
    serve.slack.wait_for(lambda s: len(s.calls_to("chat.update")) == 2)
    follow_up = shown(serve.slack.calls_to("chat.update")[1].params)
    assert "#4080" in follow_up and "#4102" not in follow_up
    assert serve.slack.posts()[1].params["thread_ts"] == "1710000000.000100"


def test_a_retried_mention_is_answered_once(serve):
    body, kind = mention_event("<@UPRDIGEST> what merged on 2026-03-07?", ts="1710000000.000300")
    serve.send(body, kind)
    serve.slack.wait_for(lambda s: len(s.calls_to("chat.update")) == 1)
    serve.send(body, kind)  # Slack delivers again when it missed the first ack
    # Nothing marks "the bot will send nothing more", so this watches a quiet second. Only a bug sends what it
    # looks for: a slow machine can make it miss one, never fail a correct bot.
    time.sleep(1)
    assert len(serve.slack.posts()) == 1 and len(serve.slack.calls_to("chat.update")) == 1


def test_summary_button_responds_with_the_full_summary(serve):
    serve.send(*button_click("prdigest_pr_summary", f"{REPO}#4102", serve.slack.response_url("button")))
    serve.slack.wait_for(lambda s: s.responses("button"))
    reply = serve.slack.responses("button")[0].params
    body = shown(reply)
    for section in ("What changed and why", "Technical impact", "Potential risks", "Key insights"):
        assert f"*{section}*" in body
    assert LOUD_TITLE not in json.dumps(reply) and reply["response_type"] == "ephemeral"


def test_subscribe_is_announced_in_the_channel(serve):
    serve.command("subscribe rocm at 07:45", "sub")
    serve.slack.wait_for(lambda s: s.responses("sub"))
    reply = serve.slack.responses("sub")[0].params
    assert reply["response_type"] == "in_channel"
    assert "(`rocm`) at 07:45 America/Los_Angeles time (set by <@U0ALICE>)" in reply["text"]
    serve.command("unsubscribe", "unsub")
    serve.slack.wait_for(lambda s: s.responses("unsub"))


def test_home_tab_is_published(serve):
    serve.send(*home_opened("EvHOME"))
    serve.slack.wait_for(lambda s: s.calls_to("views.publish"))
    view = serve.slack.calls_to("views.publish")[0].params
    assert view["user_id"] == "U0ALICE" and view["view"]["type"] == "home"
    text = "\n".join(block["text"]["text"] for block in view["view"]["blocks"] if "text" in block)
    assert "merged PRs for 2026-03-08" in text and "/prdigest area NAME [when]" in text
    assert LOUD_TITLE not in text


def test_hostile_requests_get_no_500_and_no_traceback(serve):
    serve.log()
    statuses = []
    for body, kind in MALFORMED:
        for headers in ({"Content-Type": kind}, signed_raw(body, kind), signed_raw(body, kind, "abc")):
            response = httpx.post(serve.url, content=body, headers=headers, timeout=10)
            statuses.append(response.status_code)
    # Listeners run after the ack, so their lines come later: wait for one line per request.
    logged = serve.log_until(lambda lines: sum(" WARNING " in line for line in lines) >= len(statuses),
                             "a log line for each request")
    assert statuses and max(statuses) < 500, statuses
    assert not [line for line in logged if "Traceback" in line or " ERROR " in line], logged
    assert len([line for line in logged if " WARNING " in line]) == len(statuses), logged  # one line each
    assert statuses.count(400) >= 2 * 8  # the malformed bodies, signed or with the bad timestamp
    assert serve.slack.calls_to("response_url") == [] and serve.slack.posts() == []


def test_a_malformed_body_is_refused_with_one_line(serve):
    serve.log()
    body = b"{not json"
    refused = REFUSED + "a signed body that is not valid JSON"
    # Sent twice: each line is written before its answer, so the second request's line marks the end of the first's.
    for stamp in (int(time.time()), int(time.time()) - 1):
        response = httpx.post(serve.url, content=body, headers=signed_raw(body, JSON, str(stamp)), timeout=30)
        assert response.status_code == 400 and response.text == "a signed body that is not valid JSON"
    lines = serve.log_until(lambda lines: sum(refused in line for line in lines) == 2, "both refusals logged")
    # One line each, and nothing else from the front door. The daily report's scheduler and its GitHub client may
    # log their own work meanwhile, by the clock: that is the bot's background, not this request's.
    front = [line for line in lines if "bot.slack.http" in line or "Traceback" in line or "ERROR" in line]
    assert len(front) == 2 and all(refused in line for line in front), lines


def test_a_replayed_request_is_answered_once(serve):
    body, kind = slash_command("2026-03-08", serve.slack.response_url("replay"))
    headers = signed_headers(body, kind)
    serve.log()
    answers = [httpx.post(serve.url, content=body.encode(), headers=headers, timeout=30) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    serve.slack.wait_for(lambda s: s.responses("replay"))
    # The two copies were turned away at the door (a line each), so no listener ever saw them.
    serve.log_until(lambda lines: sum(REFUSED in line for line in lines) >= 2, "both copies refused")
    texts = [call.params["text"] for call in serve.slack.responses("replay")]
    assert len(texts) == len(set(texts))  # the reply's messages, each once


# ---------------------------------------------------------------- the front door, in raw bytes

def _exchange(serve, head: str, body: bytes = b"", timeout: float = 10) -> str:
    """The status line answering a request sent byte for byte (httpx would mend a wrong Content-Length);
    "" when the server closed the connection without one."""
    port = int(serve.url.split(":")[2].split("/")[0])
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(f"POST /slack/events HTTP/1.1\r\nHost: x\r\n{head}\r\n".encode("latin-1") + body)
            return sock.recv(4096).decode("latin-1").split("\r\n", 1)[0]
        except ConnectionResetError:
            return ""


def _fields(headers: dict[str, str]) -> str:
    return "".join(f"{name}: {value}\r\n" for name, value in headers.items())


def test_an_unsigned_request_is_refused_before_its_body_is_sent(serve):
    serve.log()
    # Only the headers are sent: the body they announce is neither waited for nor read.
    assert _exchange(serve, f"Content-Length: {1024 * 1024}\r\n") == "HTTP/1.1 401 Unauthorized"
    stale = _fields(signed_raw(b"x", JSON, str(int(time.time()) - 6 * 60)))
    assert _exchange(serve, stale + "Content-Length: 1\r\n") == "HTTP/1.1 401 Unauthorized"
    assert _exchange(serve, _fields(signed_raw(b"x", JSON, "1e9")) + "Content-Length: 1\r\n") == "HTTP/1.1 400 Bad Request"
    lines = serve.log_until(lambda lines: sum(REFUSED in line for line in lines) >= 3, "a line for each")
    assert sum("401 Unauthorized (no valid signature, or a stale timestamp)" in line for line in lines) == 2


def test_a_body_over_1_mb_is_refused_before_it_is_read(serve):
    # Only the headers are sent: the 413 comes without waiting for the 10 MB they announce.
    assert _exchange(serve, "Content-Length: 10485760\r\n") == "HTTP/1.1 413 Request Entity Too Large"
    chunk = b"x" * 65536
    stream = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(17))  # 1.06 MB with no length given
    signed = _fields(signed_raw(stream, JSON))  # unsigned, it would get its 401 at once
    assert _exchange(serve, "Transfer-Encoding: chunked\r\n" + signed, stream) == "HTTP/1.1 413 Request Entity Too Large"
    body, kind = slash_command("today", serve.slack.response_url("big"))
    padded = body + "&pad=" + "x" * (1024 * 1024)
    assert httpx.post(serve.url, content=padded.encode(), headers=signed_headers(padded, kind), timeout=10).status_code == 413
    assert [line for line in serve.log() if "413" in line and "refused a request from 127.0.0.1" in line]


@pytest.mark.parametrize("length", BAD_LENGTHS)
def test_a_content_length_not_a_short_run_of_digits_gets_400(serve, length):
    assert _exchange(serve, f"Content-Length: {length}\r\n", b"abc") == "HTTP/1.1 400 Bad Request"


@pytest.mark.parametrize("stamp", BAD_TIMESTAMPS)
def test_a_timestamp_not_a_short_run_of_digits_gets_400(serve, stamp):
    body, kind = slash_command("today", serve.slack.response_url("stamp"))
    head = _fields({**signed_headers(body, kind), "X-Slack-Request-Timestamp": stamp})
    assert _exchange(serve, head.encode().decode("latin-1") + f"Content-Length: {len(body)}\r\n", body.encode()) \
        == "HTTP/1.1 400 Bad Request"


def test_idle_and_stalled_connections_are_closed(serve):
    port = int(serve.url.split(":")[2].split("/")[0])
    idle = socket.create_connection(("127.0.0.1", port), timeout=60)
    stalled = socket.create_connection(("127.0.0.1", port), timeout=60)
    stalled.sendall(f"POST /slack/events HTTP/1.1\r\nHost: x\r\n{_fields(signed_raw(b'x' * 100, JSON))}"
                    "Content-Length: 100\r\n\r\nabc".encode())
    slow_header = socket.create_connection(("127.0.0.1", port), timeout=60)
    slow_header.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\nX-Slack-")
    for sock in (idle, stalled, slow_header):
        with sock:
            assert _closed(sock)
    assert serve.command("today", "after-idle").status_code == 200  # the server still answers


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed the connection (rather than the 60 s socket timeout passing)."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True

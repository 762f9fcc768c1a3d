"""The real `prdigest serve --http` against slow clients over real sockets, and a signed request replayed to another
process on the same store: after a restart, or to a second server beside the first."""
import resource
import sqlite3
import threading
import time

import httpx
import pytest
from freezegun import freeze_time
from servers.slack_api import FakeSlack, signed_headers, slash_command
from slack_helpers import serve_http
from slow_clients import SlowClients
from waiting import wait_until

from bot.config import Settings
from bot.runtime import Runtime
from bot.slack.app import Listeners
from bot.slack.http_server import CONNECTIONS, OTHER_FILES, connections_allowed
from store.tables.signed_requests import FORGET_EVERY, SignatureLedger

REPLAY = "refused a request from 127.0.0.1: a signed request sent again; answered the first time"
# A header that never ends, for a client sending it a byte at a time.
ENDLESS = b"POST /slack/events HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 100_000
# A request the server answers (404: no such page) and keeps the connection open for the next.
KEPT_ALIVE = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.fixture(scope="module")
def bot(tmp_path_factory):
    with FakeSlack() as slack, serve_http(tmp_path_factory.mktemp("front") / "prdigest.db", slack,
                                          PRDIGEST_REPOS="") as served:
        yield served


def _port(bot) -> int:
    return int(bot.url.split(":")[2].split("/")[0])


def test_a_trickling_request_is_closed_at_its_deadline_though_never_idle(bot):
    bot.log()
    # A byte a second never leaves the connection idle (5 s); only the deadline on the whole request closes it.
    with SlowClients(_port(bot), count=1, request=ENDLESS, piece=1, every=1) as trickle:
        bot.log_until(lambda lines: any("connection(s) whose request took over 5 s to arrive" in line
                                        for line in lines), "the trickling request closed at its deadline")
        wait_until(lambda: trickle.closed, "the client to see its connection closed")
    assert bot.command("help", "after-trickle").status_code == 200


def test_a_signed_command_is_answered_while_many_slow_clients_hold_connections(bot):
    # Each sends a request in three pieces a second apart and is answered, over and over on one connection: never
    # idle, never late, so only the room the server keeps for connections lets the signed command in.
    with SlowClients(_port(bot), count=300, request=KEPT_ALIVE, piece=12, every=1) as slow:
        wait_until(lambda: slow.opened >= 300, "the slow clients connected")
        assert bot.command("help", "among-slow").status_code == 200
        bot.slack.wait_for(lambda s: s.responses("among-slow"))
        wait_until(lambda: len(slow.answered) == 300, "every slow client answered too", timeout=60)
    assert "/prdigest" in bot.slack.responses("among-slow")[0].params["text"]


def test_a_store_held_by_another_process_costs_the_replay_check_not_the_answer(bot):
    bot.log()
    holder = sqlite3.connect(bot.db_path, timeout=1)
    holder.execute("begin immediate")  # as an import holds it while it writes
    try:
        assert bot.command("help", "held").status_code == 200
        bot.log_until(lambda lines: any("handled a signed request without the replay check: the store is busy" in line
                                        for line in lines), "one line saying the check was skipped")
    finally:
        holder.rollback()
        holder.close()
    bot.slack.wait_for(lambda s: s.responses("held"))


def test_answers_wait_for_the_acknowledgements_still_to_send(tmp_path):
    asked = threading.Event()

    def acks_waiting() -> bool:  # the HTTP server's count of requests waiting for their acknowledgement: none
        asked.set()
        return False

    listeners = Listeners(Runtime(Settings.from_env({"PRDIGEST_DB": str(tmp_path / "prdigest.db")})),
                          acks_waiting=acks_waiting)
    answered: list[bool] = []
    listeners.later(lambda: answered.append(asked.is_set()))
    wait_until(lambda: answered, "the answer")
    assert answered == [True]  # the answer pool asked before it answered


def test_the_open_file_limit_is_raised_for_every_connection():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2 * CONNECTIONS + OTHER_FILES:
        pytest.skip(f"this machine's hard limit on open files ({hard}) is below what {CONNECTIONS} connections need")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # a common default
    try:
        assert connections_allowed(CONNECTIONS) == CONNECTIONS
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= 2 * CONNECTIONS + OTHER_FILES
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _replay(url: str, body: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(url, content=body.encode(), headers=headers, timeout=30)


def test_a_request_replayed_after_a_restart_is_answered_once_and_not_handled_again(tmp_path):
    db_path = tmp_path / "prdigest.db"
    with FakeSlack() as slack:
        body, kind = slash_command("help", slack.response_url("restart"))
        headers = signed_headers(body, kind)
        with serve_http(db_path, slack, PRDIGEST_REPOS="") as first:
            assert _replay(first.url, body, headers).status_code == 200
            slack.wait_for(lambda s: s.responses("restart"))
        with serve_http(db_path, slack, PRDIGEST_REPOS="") as restarted:
            assert _replay(restarted.url, body, headers).status_code == 200
            restarted.log_until(lambda lines: any(REPLAY in line for line in lines), "the copy refused at the door")
        assert len(slack.responses("restart")) == 1


@pytest.mark.processes
def test_two_servers_sharing_a_store_handle_a_request_once(tmp_path):
    db_path = tmp_path / "prdigest.db"
    with FakeSlack() as slack:
        body, kind = slash_command("help", slack.response_url("twice"))
        headers = signed_headers(body, kind)
        with serve_http(db_path, slack, PRDIGEST_REPOS="") as one, serve_http(db_path, slack, PRDIGEST_REPOS="") as two:
            assert _replay(one.url, body, headers).status_code == 200
            slack.wait_for(lambda s: s.responses("twice"))
            assert _replay(two.url, body, headers).status_code == 200
            two.log_until(lambda lines: any(REPLAY in line for line in lines), "the copy refused by the second server")
        assert len(slack.responses("twice")) == 1


def test_signatures_past_their_freshness_are_forgotten(tmp_path):
    with freeze_time("2026-03-09 12:00:00") as clock:
        ledger = SignatureLedger(tmp_path / "prdigest.db", wait=1)
        now = int(time.time())
        assert ledger.first_delivery("v0=early", fresh_until=now + 300)
        assert not ledger.first_delivery("v0=early", fresh_until=now + 300)
        clock.tick(300 + FORGET_EVERY + 1)
        assert ledger.first_delivery("v0=later", fresh_until=int(time.time()) + 300)
        # The table keeps the last few minutes only; the early one would fail the signature check by now.
        assert [row[0] for row in ledger.db.execute("select signature from signed_requests")] == ["v0=later"]

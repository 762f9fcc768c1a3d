"""Several workspaces: each installs the app through the real OAuth redirect flow, and each sees, changes and gets
only its own rows, posted with its own token; an uninstall stops one only; a single-workspace store keeps working."""
from __future__ import annotations

import io
import re
import time
from datetime import date, datetime, timedelta

import httpx
from conftest import LA
from freezegun import freeze_time
from servers.slack_api import (
    APP_TOKEN,
    CLIENT_ID,
    CLIENT_SECRET,
    JSON,
    SIGNING_SECRET,
    FakeSlack,
    button_click,
    dm_channel,
    home_opened,
    lifecycle_event,
    mention_event,
    mention_payload,
    signed_headers,
    slash_command,
)
from servers.slack_socket import FakeSocketMode
from slack_helpers import (
    ACME,
    CHANNEL,
    GLOBEX,
    REPO,
    TEAM,
    authorize,
    import_fixtures,
    install,
    make_pr,
    seed_day,
    serve_http,
    serve_process,
    start_install,
    token_of,
)
from sqlite_utils import Database
from waiting import wait_until

from bot.answers.commands import execute
from bot.config import Settings
from bot.messages.interactive import VOTE_DOWN_ACTION
from bot.runtime import Runtime
from bot.slack.app import slack_client
from bot.slack.http_guard import SignedRequestsOnly
from bot.slack.workspaces import one_workspace
from store.db import open_db
from store.migrations import migrations
from store.subscription.cadence import DAILY, LIVE, RELEASES, Cadence
from store.subscription.filter import EVERYTHING
from store.tables.installations import find_installation, remove_installation, save_installation
from store.tables.posts import PostKey, begin_send, claim_post, find_post
from store.tables.prs import save_prs
from store.tables.signed_requests import SignatureLedger
from store.tables.subscriptions import get_subscription, subscribe, team_subscriptions
from store.tables.teams import TEAM_TABLES, Team
from store.tables.threads import claim_turn, earlier_turns, keep_answered


def test_two_workspaces_install_and_each_gets_its_own_daily_thread_and_answers_with_its_own_token(installable):
    slack, runtime = installable.slack, installable.runtime
    for team in (ACME, GLOBEX):
        done = install(installable.base, team)
        assert done.status_code == 200 and "Thank you!" in done.text
    acme, globex = token_of(runtime, ACME), token_of(runtime, GLOBEX)
    assert acme != globex and {call.team for call in slack.calls_to("oauth.v2.access")} == {ACME, GLOBEX}

    assert "now gets the daily report of acme/engine (`rocm`)" in installable.command(ACME, "subscribe rocm at 9:00", "a-sub")
    assert "now gets the daily report of acme/engine at 09:00" in installable.command(GLOBEX, "subscribe at 9:00", "g-sub")
    today = datetime.now(LA).date()
    seed_day(runtime.db, today, 2, areas=["rocm"])
    seed_day(runtime.db, today, 3, start=2000, areas=["core"])
    scheduler = installable.scheduler()
    with freeze_time(datetime.combine(today + timedelta(days=1), datetime.min.time().replace(hour=9, minute=1), tzinfo=LA)):
        scheduler.tick()
    for team, token, merged in ((ACME, acme, "2 merged"), (GLOBEX, globex, "5 merged")):
        parents, replies = slack.thread(CHANNEL, team)
        assert len(parents) == 1 and merged in parents[0]["text"] and replies
        assert {call.token for call in slack.posts(CHANNEL, team)} == {token}

    event = mention_event("<@UPRDIGEST> what merged in rocm?", ts="1760000000.000100", channel=CHANNEL, team=GLOBEX)
    assert installable.events(GLOBEX).send(*event).status_code == 200
    slack.wait_for(lambda s: s.calls_to("chat.update"))
    [update] = slack.calls_to("chat.update")
    assert update.token == globex and "#1000" in update.params["text"]
    assert all(call.token == globex for call in slack.posts(team=GLOBEX) if call.params.get("thread_ts") == "1760000000.000100")


def test_each_workspace_gets_its_own_live_alerts_and_my_prs_with_its_own_token(installable):
    """The same channel and user IDs in both workspaces, each following other PRs, and a different person there."""
    slack, runtime = installable.slack, installable.runtime
    for team in (ACME, GLOBEX):
        install(installable.base, team)
    installable.command(ACME, "subscribe rocm live", "a-live")
    installable.command(GLOBEX, "subscribe core live", "g-live")
    for team, login in ((ACME, "ada-l"), (GLOBEX, "grace-h")):
        installable.command(team, f"me github {login}", f"{team}-login")
        assert "each PR of yours" in installable.command(team, "me subscribe my-prs", f"{team}-mine")
    merged = datetime.now(LA) - timedelta(minutes=10)
    save_prs(runtime.db, [make_pr(9001, merged, title="[ROCm] Ada's kernel", author="ada-l", areas=["rocm"]),
                          make_pr(9002, merged, title="[Core] Grace's scheduler", author="grace-h", areas=["core"])])
    installable.scheduler().tick()
    for team, mine, theirs in ((ACME, "#9001", "#9002"), (GLOBEX, "#9002", "#9001")):
        for room in (CHANNEL, dm_channel("U0ALICE")):
            said = "\n".join(message["text"] for message in slack.thread(room, team)[0])
            assert mine in said and theirs not in said, (team, room, said)
        assert {call.token for call in slack.posts(team=team)} == {token_of(runtime, team)}


def test_a_workspace_never_reads_or_changes_another_workspaces_rows(installable):
    slack, runtime = installable.slack, installable.runtime
    for team in (ACME, GLOBEX):
        install(installable.base, team)
    seed_day(runtime.db, datetime.now(LA).date(), 2, areas=["rocm"])
    installable.command(ACME, "subscribe rocm weekly", "a-sub")
    assert installable.command(GLOBEX, "subscriptions", "g-list").startswith("This channel gets no reports")
    assert installable.command(GLOBEX, "unsubscribe", "g-stop") == "This channel has no reports, live alerts or release threads to stop."
    assert [sub.filter.text for sub in team_subscriptions(runtime.db, Team(ACME))] == ["rocm"]
    assert "the weekly report of acme/engine (`rocm`)" in installable.command(ACME, "subscriptions", "a-list")

    # An answer's vote buttons carry its number: Globex clicking Acme's number finds no answer of its own.
    installable.command(ACME, "ask what merged in rocm?", "a-ask")
    [value] = [element["value"] for block in slack.responses("a-ask")[-1].params["blocks"]
               for element in block.get("elements", []) if element.get("action_id") == VOTE_DOWN_ACTION]
    click = button_click(VOTE_DOWN_ACTION, value, slack.response_url("g-vote"), channel=CHANNEL, user="U0EVE", team=GLOBEX)
    assert installable.events(GLOBEX).send(*click).status_code == 200
    slack.wait_for(lambda s: s.responses("g-vote"))
    assert slack.responses("g-vote")[0].params["text"].startswith("That answer is no longer kept")
    assert slack.calls_to("views.open") == []  # the modal would have shown Acme's question

    assert installable.events(GLOBEX).send(*home_opened("EvG1", user="U0EVE", team=GLOBEX)).status_code == 200
    slack.wait_for(lambda s: s.calls_to("views.publish"))
    tab = "\n".join(block["text"]["text"] for block in slack.view("U0EVE", GLOBEX)["blocks"] if "text" in block)
    assert f"<#{CHANNEL}>" not in tab  # Acme's channel is not among what channels get in Globex
    assert slack.calls_to("views.publish")[0].token == token_of(runtime, GLOBEX)


def test_an_uninstall_stops_that_workspaces_posts_and_keeps_its_history(installable):
    slack, runtime = installable.slack, installable.runtime
    for team in (ACME, GLOBEX):
        install(installable.base, team)
        installable.command(team, "subscribe at 9:00", f"{team}-sub")
    today = datetime.now(LA).date()
    seed_day(runtime.db, today, 2)
    seed_day(runtime.db, today + timedelta(days=1), 2, start=3000)
    scheduler = installable.scheduler()
    nine = datetime.min.time().replace(hour=9, minute=1)
    with freeze_time(datetime.combine(today + timedelta(days=1), nine, tzinfo=LA)):
        scheduler.tick()
    assert len(slack.thread(CHANNEL, ACME)[0]) == len(slack.thread(CHANNEL, GLOBEX)[0]) == 1

    slack.uninstall(ACME)
    assert installable.events(ACME).send(*lifecycle_event("app_uninstalled", ACME, "EvU1")).status_code == 200
    wait_until(lambda: find_installation(runtime.db, Team(ACME)) is None, "the uninstalled workspace forgotten")
    with freeze_time(datetime.combine(today + timedelta(days=2), nine, tzinfo=LA)):
        scheduler.tick()
    assert len(slack.thread(CHANNEL, ACME)[0]) == 1 and len(slack.thread(CHANNEL, GLOBEX)[0]) == 2
    assert not [call for call in slack.posts(team=None) if not call.ok]  # nothing was even tried with Acme's old token
    assert [sub.repo for sub in team_subscriptions(runtime.db, Team(ACME))] == [REPO]  # its history is kept

    install(installable.base, ACME)  # back again: its subscription goes on
    with freeze_time(datetime.combine(today + timedelta(days=2), nine.replace(minute=30), tzinfo=LA)):
        scheduler.tick()
    assert len(slack.thread(CHANNEL, ACME)[0]) == 2


def test_a_revoked_bot_token_stops_the_workspace_too(installable):
    install(installable.base, GLOBEX)
    assert installable.events(GLOBEX).send(*lifecycle_event("tokens_revoked", GLOBEX, "EvR1")).status_code == 200
    wait_until(lambda: find_installation(installable.runtime.db, Team(GLOBEX)) is None, "the revoked token forgotten")


def test_a_tampered_or_expired_state_installs_nothing(installable):
    slack, base = installable.slack, installable.base
    link, cookie = start_install(base, ACME)
    redirect = authorize(link)
    state = re.search(r"state=([^&]+)", redirect)[1]
    forged = redirect.replace(state, state[:-1] + ("A" if state[-1] != "A" else "B"))
    assert httpx.get(forged, headers={"Cookie": cookie}, timeout=30).status_code in (400, 401)
    assert httpx.get(forged, headers={"Cookie": cookie.replace(state, forged.split("state=")[1])}, timeout=30).status_code == 401
    assert httpx.get(redirect, timeout=30).status_code == 400  # no cookie: not the browser that started it

    late_link, late_cookie = start_install(base, GLOBEX)
    late = authorize(late_link)
    with freeze_time(datetime.now() + timedelta(minutes=11)):
        assert httpx.get(late, headers={"Cookie": late_cookie}, timeout=30).status_code == 401
    assert slack.calls_to("oauth.v2.access") == []
    assert find_installation(installable.runtime.db, Team(ACME)) is None
    assert find_installation(installable.runtime.db, Team(GLOBEX)) is None

    done = httpx.get(redirect, headers={"Cookie": cookie}, timeout=30)  # the real one still works, once
    assert done.status_code == 200 and find_installation(installable.runtime.db, Team(ACME)) is not None
    assert httpx.get(redirect, headers={"Cookie": cookie}, timeout=30).status_code == 401


def test_the_install_pages_are_the_only_unsigned_requests_taken(installable):
    base = installable.base
    assert httpx.get(f"{base}/slack/install", timeout=30).status_code == 200
    for method, path in (("GET", "/slack/events"), ("POST", "/slack/install"), ("GET", "/slack/other"),
                         ("PUT", "/slack/oauth_redirect"), ("GET", "/")):
        assert httpx.request(method, f"{base}{path}", timeout=30).status_code == 404, (method, path)
    assert httpx.post(f"{base}/slack/events", content=b"command=/prdigest", timeout=30).status_code == 401
    huge = httpx.get(f"{base}/slack/oauth_redirect", params={"state": "x" * 20_000}, timeout=30)
    assert huge.status_code == 431  # bounded by the same front as the events


def test_a_workspace_that_did_not_install_the_app_gets_nothing(installable):
    install(installable.base, ACME)
    hook = installable.slack.response_url("intruder")
    body = slash_command("subscriptions", hook, channel=CHANNEL, team="T0NOBODY")
    assert installable.events("T0NOBODY").send(*body).status_code == 200
    installable.slack.wait_for(lambda s: s.responses("intruder"))
    [said] = installable.slack.responses("intruder")  # bolt's own word, and nothing of the store
    assert "reinstall this app" in said.params["text"] and "channel" not in said.params["text"]


def test_a_token_that_rotates_is_refreshed_before_it_is_used(installable):
    slack, runtime = installable.slack, installable.runtime
    slack.rotation = 60  # each token lives a minute: within bolt's two hours, so refreshed whenever used
    install(installable.base, ACME)
    first = token_of(runtime, ACME)
    event = mention_event("<@UPRDIGEST> what merged?", ts="1760000000.000200", channel=CHANNEL, team=ACME)
    assert installable.events(ACME).send(*event).status_code == 200
    slack.wait_for(lambda s: s.calls_to("chat.update"))
    refreshed = [call for call in slack.calls_to("oauth.v2.access") if call.params.get("grant_type") == "refresh_token"]
    assert refreshed and token_of(runtime, ACME) != first
    assert slack.calls_to("chat.update")[0].token == token_of(runtime, ACME)
    assert not slack.tokens[first].works() or first != token_of(runtime, ACME)

    installable.command(ACME, "subscribe at 9:00", "a-sub")
    seed_day(runtime.db, datetime.now(LA).date(), 1)
    before, posted = token_of(runtime, ACME), len(slack.posts())
    with freeze_time(datetime.combine(datetime.now(LA).date() + timedelta(days=1), datetime.min.time().replace(hour=9, minute=5),
                                      tzinfo=LA)):
        installable.scheduler().tick()
    report = slack.posts()[posted:]
    assert report and "1 merged" in report[0].params["text"]
    assert token_of(runtime, ACME) != before and {call.token for call in report} == {token_of(runtime, ACME)}


def test_the_manifest_hears_uninstalls_and_names_the_redirect():
    from pathlib import Path

    manifest = (Path(__file__).resolve().parents[1] / "manifest.yml").read_text()
    for needed in ("app_uninstalled", "tokens_revoked", "redirect_urls:", "/slack/oauth_redirect"):
        assert needed in manifest, needed



# ---------------------------------------------------------------- a single-workspace store, and Socket Mode


def old_store(path) -> None:
    """A store of the release before workspaces: a channel's subscription and post, a person, previews, a question."""
    db = Database(path)
    migrations.apply(db, stop_before="m019_teams")
    when = "2026-03-01T17:00:00Z"
    db["subscriptions"].insert({"channel": "C1", "repo": REPO, "mode": "daily", "cadence": "daily", "filter": "rocm",
                                "post_at": "09:00", "weekday": 0, "created_by": "U0ALICE", "created_at": when})
    db["daily_posts"].insert({"channel": "C1", "repo": REPO, "kind": "daily", "date": "2026-03-08", "filter": "rocm",
                              "batch": 0, "messages": "[]", "replies_sent": 0, "state": "empty", "created_at": when,
                              "updated_at": when})
    db["people"].insert({"user": "U0ALICE", "github": "ada-l", "updated_at": when})
    db["preview_channels"].insert({"channel": "C1", "enabled_by": "U0ALICE", "enabled_at": when})
    db["thread_turns"].insert({"channel": "C1", "thread_ts": "1.0", "ts": "1.0", "question": "what merged?", "created_at": when})
    db.close()


def teams_of_rows(path) -> set[tuple[str, str]]:
    db = open_db(path)
    try:
        return {row for table in TEAM_TABLES for row in db.execute(f"select distinct enterprise_id, team_id from {table}")}
    finally:
        db.close()


def test_a_single_workspace_store_becomes_its_tokens_workspace_at_the_first_start(tmp_path, caplog):
    path = tmp_path / "old.db"
    old_store(path)
    db = open_db(path)  # migrated: its rows belong to no workspace yet
    import_fixtures(db)
    db.close()
    assert teams_of_rows(path) == {("", "")}
    with FakeSlack() as slack, serve_http(path, slack) as bot:
        assert bot.command("subscriptions", "sub", channel="C1").status_code == 200
        slack.wait_for(lambda s: s.responses("sub"))
        assert slack.responses("sub")[0].params["text"] == (
            "This channel gets the daily report of acme/engine (`rocm`) at 09:00 America/Los_Angeles time.")
        bot.command("me", "me", channel="C1")
        bot.command("unfurl", "unfurl", channel="C1")
        slack.wait_for(lambda s: s.responses("me") and s.responses("unfurl"))
        assert slack.responses("me")[0].params["text"].startswith("Your GitHub login: `ada-l`.")
        assert slack.responses("unfurl")[0].params["text"].startswith("PR link previews are on in this channel")
    assert teams_of_rows(path) == {("", TEAM)}

    # The same store given the token of another workspace: that one sees none of them, and they stay as they are.
    with FakeSlack(bot_token="xoxb-other-workspace") as other:
        other.tokens["xoxb-other-workspace"].team = "T0OTHER"
        settings = Settings.from_env({"PRDIGEST_DB": str(path), "SLACK_BOT_TOKEN": "xoxb-other-workspace",
                                      "PRDIGEST_SLACK_API_URL": other.api_url})
        workspace = one_workspace(Runtime(settings), slack_client(settings))
        assert workspace.team == Team("T0OTHER") and "this store's rows belong to workspace T0TEST" in caplog.text
        listed = execute(Runtime(settings), "subscriptions", workspace.team, channel="C1").text
        assert listed.startswith("This channel gets no reports")
    assert teams_of_rows(path) == {("", TEAM)}


INSTALLS_AT = re.compile(r"workspaces install the app at http://[^:]+:(\d+)/slack/install")


def test_socket_mode_serves_the_install_pages_on_a_port_beside_the_socket(tmp_path):
    path = tmp_path / "socket.db"
    db = open_db(path)
    import_fixtures(db)
    db.close()
    with FakeSlack() as slack, FakeSocketMode() as socket_mode:
        slack.socket_url = socket_mode.url
        env = {"SLACK_BOT_TOKEN": "", "SLACK_SIGNING_SECRET": "", "SLACK_APP_TOKEN": APP_TOKEN, "PRDIGEST_REPOS": REPO,
               "SLACK_CLIENT_ID": CLIENT_ID, "SLACK_CLIENT_SECRET": CLIENT_SECRET}
        with serve_process(path, slack, ("--install-port", "0"), INSTALLS_AT, **env) as (port, _):
            base = f"http://127.0.0.1:{port}"
            slack.redirect_url = f"{base}/slack/oauth_redirect"
            socket_mode.wait_connected()
            assert install(base, ACME).status_code == 200
            assert httpx.post(f"{base}/slack/events", content=b"{}", timeout=30).status_code in (401, 404)
            event = mention_payload("<@UPRDIGEST> what merged on 2026-03-08?", ts="1760000000.000300", channel=CHANNEL,
                                    team=ACME)
            socket_mode.wait_ack(socket_mode.send("events_api", event, accepts_response_payload=False))
            slack.wait_for(lambda s: s.calls_to("chat.update"))
    db = open_db(path)
    token = find_installation(db, Team(ACME))["bot_token"]
    db.close()
    assert slack.calls_to("chat.update")[0].token == token and "#4102" in slack.calls_to("chat.update")[0].params["text"]


def test_the_command_line_acts_in_the_workspace_it_names(installable, run_cli):
    slack, runtime = installable.slack, installable.runtime
    for team in (ACME, GLOBEX):
        install(installable.base, team)
    installable.command(ACME, "subscribe rocm", "a-sub")
    ambiguous = run_cli("run", "--channel", CHANNEL, "subscriptions")
    assert ambiguous.code == 2 and "this store serves 2 workspaces (T0ACME, T0GLOBEX): name one" in ambiguous.err
    assert "the daily report of acme/engine (`rocm`)" in run_cli("run", "--channel", CHANNEL, "--team", ACME, "subscriptions").out
    assert run_cli("run", "--channel", CHANNEL, "--team", GLOBEX, "subscriptions").out.startswith("This channel gets no reports")
    unknown = run_cli("run", "--channel", CHANNEL, "--team", "T0NONE", "subscriptions")
    assert unknown.code == 2 and "no workspace T0NONE uses this store (it knows T0ACME, T0GLOBEX)" in unknown.err

    yesterday = datetime.now(LA).date() - timedelta(days=1)
    seed_day(runtime.db, yesterday, 2, areas=["rocm"])
    posted = run_cli("post-daily", "--channel", CHANNEL, "--team", ACME, "--date", yesterday.isoformat())
    assert posted.code == 0 and posted.out.startswith(f"posted 2 message(s) to {CHANNEL}"), posted.err
    assert {call.token for call in slack.posts(CHANNEL)} == {token_of(runtime, ACME)}
    assert slack.thread(CHANNEL, GLOBEX) == ([], [])


def test_an_uninstall_releases_the_workspaces_claims_at_once(db):
    acme, plan = Team(ACME), lambda: [{"text": "parent", "blocks": []}, {"text": "reply", "blocks": []}]
    save_installation(db, acme, {"bot_token": "xoxb-acme", "installed_at": 1.0})
    held = claim_post(db, PostKey.of(CHANNEL, REPO, date(2026, 3, 4), team=acme), "poster", plan, 600, time.time())
    theirs = claim_post(db, PostKey.of(CHANNEL, REPO, date(2026, 3, 4), team=Team(GLOBEX)), "poster", plan, 600, time.time())
    assert remove_installation(db, acme) and not remove_installation(db, acme)
    assert find_post(db, held.key).owner is None and find_post(db, theirs.key).owner == "poster"
    assert not begin_send(db, held, 1, 600, time.time())  # its poster stops at the next message


def test_a_workspace_that_installs_again_begins_its_live_alerts_and_release_threads_again(db):
    acme, long_ago = Team(ACME), datetime(2026, 1, 1, tzinfo=LA)
    save_installation(db, acme, {"bot_token": "xoxb-acme", "installed_at": 1.0})
    for cadence in (Cadence(LIVE), Cadence(RELEASES), Cadence(DAILY)):
        subscribe(db, acme, CHANNEL, REPO, EVERYTHING, cadence, "U0ALICE", long_ago)
    remove_installation(db, acme)
    assert save_installation(db, acme, {"bot_token": "xoxb-acme-2", "installed_at": 2.0})
    live, releases, daily = (get_subscription(db, acme, CHANNEL, REPO, slot) for slot in (LIVE, RELEASES, DAILY))
    recently = datetime.now(LA) - timedelta(minutes=5)
    assert live.created_at > recently and releases.created_at > recently and daily.created_at == long_ago
    assert not save_installation(db, acme, {"bot_token": "xoxb-acme-3", "installed_at": 2.0})  # a rotated token
    assert get_subscription(db, acme, CHANNEL, REPO, LIVE).created_at == live.created_at


def test_the_door_lets_through_only_the_install_pages_unsigned(db, isolated_env):
    """What reaches the app behind the guard: a request to anything else is answered 404 at the door."""
    reached = []

    def app(environ, start_response):
        reached.append((environ["REQUEST_METHOD"], environ["PATH_INFO"]))
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]

    door = SignedRequestsOnly(app, SIGNING_SECRET, "/slack/events", SignatureLedger(isolated_env, 0.5),
                              pages=("/slack/install", "/slack/oauth_redirect"))
    beside_the_socket = SignedRequestsOnly(app, "", None, SignatureLedger(isolated_env, 0.5), pages=("/slack/install",))
    statuses = []
    for guard, method, path in ((door, "GET", "/slack/install"), (door, "GET", "/slack/oauth_redirect"),
                                (door, "GET", "/slack/events"), (door, "POST", "/slack/install"),
                                (door, "HEAD", "/slack/install"), (door, "GET", "/slack/other"),
                                (beside_the_socket, "GET", "/slack/install"), (beside_the_socket, "POST", "/slack/events")):
        body = b"{}"
        environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "CONTENT_LENGTH": str(len(body)),
                   "CONTENT_TYPE": "application/json", "wsgi.input": io.BytesIO(body),
                   **{f"HTTP_{name.upper().replace('-', '_')}": value for name, value in signed_headers("{}", JSON).items()
                      if name != "Content-Type"}}
        guard(environ, lambda status, headers: statuses.append(status.split()[0]))
    assert reached == [("GET", "/slack/install"), ("GET", "/slack/oauth_redirect"), ("GET", "/slack/install")]
    assert statuses == ["200", "200", "404", "404", "404", "404", "200", "404"]


def test_a_thread_reads_back_only_its_own_workspaces_turns(db):
    """The same channel and thread ts in two workspaces: a follow-up reads its own thread's questions and answers."""
    acme, globex = Team(ACME), Team(GLOBEX)
    for team, question in ((acme, "what merged in rocm?"), (globex, "what merged in core?")):
        assert claim_turn(db, team, CHANNEL, "1.0", "1.0", question)
    keep_answered(db, acme, CHANNEL, "1.0", '{"acme/engine": "rocm"}')
    assert earlier_turns(db, globex, CHANNEL, "1.0", "2.0") == [("what merged in core?", None)]
    assert earlier_turns(db, acme, CHANNEL, "1.0", "2.0") == [("what merged in rocm?", '{"acme/engine": "rocm"}')]

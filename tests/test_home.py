"""The App Home of the real `serve --http`: a person's subscriptions with controls, what channels get, the latest
report; each control one signed block_actions request and one views.publish, within Slack's 100 blocks."""
from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from servers.slack_api import BOT_TOKEN, form, home_action_payload, home_opened, view_problems
from slack_helpers import LOUD_TITLE, REPO, WORKSPACE, serving_fixtures

from bot.answers.commands import execute, help_text
from bot.config import Settings
from bot.runtime import Runtime
from bot.slack.app import slack_client
from bot.slack.home import HomeTab
from bot.slack.home_view import (
    ADD_ACTION,
    AREAS_ACTION,
    CADENCE_ACTION,
    GITHUB_ACTION,
    REMOVE_ACTION,
    Home,
    home_view,
)
from store.db import StoreReadOnly, open_db
from store.report.day import load_report
from store.subscription.cadence import CADENCES, Cadence
from store.subscription.filter import load_filter
from store.tables.people import github_login
from store.tables.subscriptions import Subscription, channel_subscriptions, get_subscription
from store.tables.teams import Team

LA = ZoneInfo("America/Los_Angeles")


@pytest.fixture(scope="module")
def bot(tmp_path_factory):
    with serving_fixtures(tmp_path_factory.mktemp("home") / "prdigest.db") as served:
        yield served


@pytest.fixture
def serve(bot):
    bot.slack.reset()
    bot.log()
    return bot


def store(bot):
    return open_db(bot.db_path)


def published(serve, user: str, count: int) -> dict:
    """The view of the `count`th views.publish to `user` since the test began, once it came."""
    serve.slack.wait_for(lambda s: len([c for c in s.calls_to("views.publish") if c.params["user_id"] == user]) >= count)
    return serve.slack.view(user)


def act(serve, user: str, action_id: str, *chosen: str, block_id: str | None = None, typed: str | None = None) -> dict:
    """`user` uses a control of their Home tab; the tab as it is published again."""
    before = len([c for c in serve.slack.calls_to("views.publish") if c.params["user_id"] == user])
    payload = serve.slack.home_action(user, action_id, *chosen, block_id=block_id, typed=typed)
    assert serve.send(*form(payload)).status_code == 200
    return published(serve, user, before + 1)


def texts(view: dict) -> list[str]:
    return [block["text"]["text"] for block in view["blocks"] if "text" in block]


def test_the_tab_shows_your_subscriptions_then_the_channels_then_the_latest_report(serve):
    db = store(serve)
    runtime = Runtime(Settings.from_env({"PRDIGEST_DB": str(serve.db_path), "PRDIGEST_REPOS": REPO}))
    assert not execute(runtime, "me subscribe rocm live -bots", WORKSPACE, channel="C0X", user="U0HOME").error
    assert not execute(runtime, "subscribe weekly path:docs/**", WORKSPACE, channel="C0DOCS", user="U0HOME").error
    db.close()
    serve.send(*home_opened("EvHOME1", user="U0HOME"))
    view = published(serve, "U0HOME", 1)
    shown = "\n".join(texts(view))
    order = [shown.index(part) for part in (
        "*Your subscriptions*", "live alerts of acme/engine (`rocm -bots`) as PRs merge",
        "*What channels get*", "<#C0DOCS>: the weekly report of acme/engine (`path:docs/**`) on Mondays",
        "merged PRs for 2026-03-08", "/prdigest me [github LOGIN")]
    assert order == sorted(order) and LOUD_TITLE not in shown
    [controls] = [b for b in view["blocks"] if b.get("block_id") == f"prdigest_sub|{REPO}|live"]
    cadence, areas = controls["elements"]
    assert cadence["initial_option"]["value"] == "live" and [o["value"] for o in areas["initial_options"]] == ["rocm"]


def test_each_control_is_one_change_and_one_publish(serve):
    user = "U0BOB"
    serve.send(*home_opened("EvHOME2", user=user))
    assert "_None yet: add one below" in "\n".join(texts(published(serve, user, 1)))

    view = act(serve, user, ADD_ACTION, f"{REPO}|my-prs")
    db = store(serve)
    [sub] = channel_subscriptions(db, WORKSPACE, user)
    assert sub.slot == "my-prs" and sub.filter.text == ""
    assert any("a message for each PR of yours that merges in acme/engine" in text for text in texts(view))

    view = act(serve, user, GITHUB_ACTION, typed="bob-the-builder")
    assert github_login(db, WORKSPACE, user) == "bob-the-builder"
    assert next(b for b in view["blocks"] if b["type"] == "input")["element"]["initial_value"] == "bob-the-builder"

    act(serve, user, ADD_ACTION, f"{REPO}|daily")
    act(serve, user, AREAS_ACTION, "rocm", "nvidia", block_id=f"prdigest_sub|{REPO}|daily")
    assert get_subscription(db, WORKSPACE, user, REPO, "daily").filter.text == "rocm nvidia"
    view = act(serve, user, CADENCE_ACTION, "weekly", block_id=f"prdigest_sub|{REPO}|daily")
    assert get_subscription(db, WORKSPACE, user, REPO, "daily") is None
    moved = get_subscription(db, WORKSPACE, user, REPO, "weekly")
    assert moved.filter.text == "rocm nvidia" and moved.cadence.text == "weekly on monday at 09:00"
    assert any(b.get("block_id") == f"prdigest_sub|{REPO}|weekly" for b in view["blocks"])

    view = act(serve, user, REMOVE_ACTION, block_id=f"prdigest_sub|{REPO}|weekly|about")
    assert [s.slot for s in channel_subscriptions(db, WORKSPACE, user)] == ["my-prs"]
    assert not any(b.get("block_id", "").startswith(f"prdigest_sub|{REPO}|weekly") for b in view["blocks"])
    db.close()
    assert [c.params["user_id"] for c in serve.slack.calls_to("views.publish")] == [user] * 7


def test_a_change_that_cannot_be_made_says_why_and_changes_nothing(serve):
    user = "U0CAROL"
    serve.send(*home_opened("EvHOME3", user=user))
    published(serve, user, 1)
    view = act(serve, user, GITHUB_ACTION, typed="not a login!")
    assert texts(view)[0].startswith(":warning: That is not a GitHub login")
    act(serve, user, ADD_ACTION, f"{REPO}|live")
    forged = [  # what no tab of ours offers: another repository, an area it lacks, a cadence it does not know
        {"type": "static_select", "action_id": ADD_ACTION, "block_id": "prdigest_add",
         "selected_option": {"text": {"type": "plain_text", "text": "x"}, "value": "acme/other|live"}},
        {"type": "multi_static_select", "action_id": AREAS_ACTION, "block_id": f"prdigest_sub|{REPO}|live",
         "selected_options": [{"text": {"type": "plain_text", "text": "x"}, "value": "gardening"}]},
        {"type": "static_select", "action_id": CADENCE_ACTION, "block_id": f"prdigest_sub|{REPO}|live",
         "selected_option": {"text": {"type": "plain_text", "text": "x"}, "value": "hourly"}},
        {"type": "multi_static_select", "action_id": AREAS_ACTION, "block_id": f"prdigest_sub|{REPO}|weekly",
         "selected_options": []},
    ]
    for count, action in enumerate(forged, start=4):  # after the tab opened, the login refused and the add
        assert serve.send(*form(home_action_payload(user, action))).status_code == 200
        assert texts(published(serve, user, count))[0].startswith(":warning: ")
    db = store(serve)
    [sub] = channel_subscriptions(db, WORKSPACE, user)
    assert (sub.slot, sub.filter.text, github_login(db, WORKSPACE, user)) == ("live", "", None)
    db.close()
    nobody = home_action_payload("U0CAROL", forged[0])
    nobody["user"] = {"id": 7}
    assert serve.send(*form(nobody)).status_code == 200
    assert not any("Traceback" in line for line in serve.log_until(
        lambda lines: any("by no user; nothing changed" in line for line in lines), "the refusal's one line"))


def test_a_full_tab_stays_within_slacks_100_blocks(db):
    repos = [f"acme/repo{n}" for n in range(12)]
    made = datetime(2026, 3, 1, tzinfo=LA)
    mine = [Subscription("U0FULL", repo, made, load_filter("rocm -bots"), Cadence(name)) for repo in repos
            for name in CADENCES[1:]]  # 60 subscriptions
    channels = [Subscription(f"C{n:04d}", repo, made, load_filter("path:docs/**"), Cadence()) for n in range(150)
                for repo in repos[:2]]
    report = load_report(db, REPO, datetime(2026, 3, 8).date(), LA)
    report.prs = []
    view = home_view(Home("octocat", mine, channels, [report] * 30, repos, LA, help_text(repos), "A notice."))
    assert view_problems(view) == [] and len(view["blocks"]) <= 100
    shown = "\n".join(texts(view))
    assert "\u2026and 30 more: `/prdigest me` lists them all." in shown
    assert "`/prdigest subscriptions` lists them." in shown and shown.endswith(texts(view)[-1])
    assert json.dumps(view).count('"type": "multi_static_select"') == 30


def test_a_store_that_cannot_be_written_is_named_at_the_top_of_the_tab(runtime, slack, monkeypatch, tmp_path):
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    tab = HomeTab(runtime, later=lambda job, *args: job(*args))
    client = slack_client(Settings.from_env({"SLACK_BOT_TOKEN": BOT_TOKEN, "PRDIGEST_SLACK_API_URL": slack.api_url}))

    def refused(team: Team, user: str) -> None:
        raise StoreReadOnly(f"the store at {tmp_path} is read-only: this needs to write to it")

    tab._change(WORKSPACE, "U0DAVE", client, refused)
    assert texts(slack.view("U0DAVE"))[0] == f":warning: That was not changed: the store at {tmp_path} is read-only: this needs to write to it"

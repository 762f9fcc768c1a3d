"""`/prdigest subscribe releases`: a thread for each release published since, posted once it is mapped."""
from __future__ import annotations

import shutil
from datetime import datetime, timedelta

import pytest
import release_repo
from release_repo import REPO
from servers.slack_api import BOT_TOKEN, Fault, dm_channel
from slack_helpers import ACME, CHANNEL, GLOBEX, WORKSPACE, install, one_team, shown, token_of

from bot.answers.commands import execute
from bot.config import Settings
from bot.runtime import Runtime
from bot.slack.app import slack_client
from bot.slack.daily import DailyPoster, Pacer
from bot.slack.releases import ReleasePosts, post_release
from store.subscription.cadence import RELEASES
from store.tables.posts import get_post
from store.tables.releases import get_release
from store.tables.subscriptions import get_subscription
from store.tables.teams import Team


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    path = tmp_path_factory.mktemp("posts") / "store.db"
    return path, release_repo.filled_store(path)


@pytest.fixture
def runtime(released, isolated_env, slack, monkeypatch):
    shutil.copy(released[0], isolated_env)
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("PRDIGEST_SLACK_API_URL", slack.api_url)
    rt = Runtime(Settings.from_env())
    yield rt
    rt.close()


def subscribe(runtime, words: str, channel: str, now: datetime) -> str:
    reply = execute(runtime, f"subscribe {words}", WORKSPACE, channel=channel, user="U0ALICE", now=now)
    assert not reply.error, reply.text
    return reply.text


def posts(runtime) -> ReleasePosts:
    """The release threads as a freshly started `serve` sends them: its own runtime and Slack client."""
    settings = Settings.from_env()
    return ReleasePosts(Runtime(settings), one_team(settings), Pacer(0))


def test_each_release_published_since_subscribing_gets_one_thread(runtime, slack, released):
    _, built = released
    since = built.published["v0.2.0"] + timedelta(minutes=1)  # after v0.2.0, before v0.3.0
    said = subscribe(runtime, "releases", "C1", since)
    assert said.startswith("This channel now gets a thread for each new release of acme/engine (set by <@U0ALICE>)."
                           " The first comes when the next release is published.")
    posts(runtime).run()
    parents, replies = slack.thread("C1")
    assert len(parents) == 1  # v0.3.0 only: the others came out before the channel subscribed
    parent = shown(slack.delivered("C1")[0].params)
    assert parent.startswith("*engine <https://github.example/acme/engine/releases/tag/v0.3.0|v0.3.0>*, published ")
    assert "102 PRs since v0.2.0" in parent and "102 merged: " in parent and "Highlights:" in parent
    assert parent.endswith("_Every PR is in the thread._")
    thread = "\n".join(shown(call.params) for call in slack.delivered("C1")[1:])
    assert replies and all(reply["thread_ts"] == parents[0]["ts"] for reply in replies)
    assert all(f"|#{number} " in thread for number in built.ranges["v0.3.0"])  # every PR, by area
    assert "*rocm* (" in thread and "*trivial* (" in thread
    record = get_post(runtime.db, "C1", REPO, built.published["v0.3.0"].astimezone(runtime.settings.timezone).date(),
                      kind=RELEASES, release="v0.3.0", team=WORKSPACE)
    assert record.state == "done" and record.parent_ts == parents[0]["ts"]

    count = len(slack.posts())
    posts(runtime).run()  # another tick, another process: nothing again
    assert len(slack.posts()) == count


def test_a_channel_following_areas_gets_only_their_prs(runtime, slack, released):
    _, built = released
    subscribe(runtime, "releases rocm", "C2", built.published["v0.2.0"] + timedelta(minutes=1))
    subscribe(runtime, "releases path:vllm/platforms/** -author:dev-1", "C7", built.published["v0.2.0"] + timedelta(minutes=1))
    assert execute(runtime, "subscriptions", WORKSPACE, channel="C2").text == (
        "This channel gets a thread for each new release of acme/engine (`rocm`).")
    posts(runtime).run()
    text = "\n".join(shown(call.params) for call in slack.delivered("C2"))
    assert "17 PRs in rocm since v0.2.0" in text and "|#1206 " in text and "|#1201 " not in text
    ruled = "\n".join(shown(call.params) for call in slack.delivered("C7"))
    assert "15 PRs matching `-author:dev-1 path:vllm/platforms/**` since v0.2.0" in ruled
    assert "|#1206 " in ruled and "|#1200 " not in ruled  # #1200 is dev-1's


def test_a_lost_answer_is_read_back_not_sent_twice(runtime, slack, released):
    _, built = released
    subscribe(runtime, "releases", "C3", built.published["v0.2.0"] + timedelta(minutes=1))
    slack.fail("chat.postMessage", None, Fault(500, {}, accept=True))  # the first reply is taken, its answer lost
    posts(runtime).run()
    parents, replies = slack.thread("C3")
    assert len(parents) == 1 and len({reply["text"] for reply in replies}) == len(replies)
    planned = get_post(runtime.db, "C3", REPO, built.published["v0.3.0"].astimezone(runtime.settings.timezone).date(),
                       kind=RELEASES, release="v0.3.0", team=WORKSPACE)
    assert [m["text"] for m in parents + replies] == [m["text"] for m in planned.messages]


def test_at_is_refused_and_unsubscribe_stops_release_threads(runtime, slack, released):
    _, built = released
    refused = execute(runtime, "subscribe releases at 9:00", WORKSPACE, channel="C4", now=built.published["v0.2.0"])
    assert refused.error and "release threads come as releases are published; `at` is for reports" in refused.text
    subscribe(runtime, "releases", "C4", built.published["v0.2.0"] + timedelta(minutes=1))
    gone = execute(runtime, "unsubscribe releases", WORKSPACE, channel="C4")
    assert gone.text == "This channel no longer gets a thread for each new release of acme/engine."
    posts(runtime).run()
    assert slack.posts("C4") == []


def test_post_release_posts_one_release_for_a_subscription_once(runtime, slack, released):
    _, built = released
    settings = Settings.from_env()
    poster = DailyPoster(slack_client(settings), Runtime(settings), Pacer(0))
    release = get_release(runtime.db, REPO, "v0.1.1")
    subscribe(runtime, "releases", "C5", built.published["v0.1.1"] - timedelta(minutes=1))
    subscribe(runtime, "releases rocm", "C6", built.published["v0.1.1"] - timedelta(minutes=1))
    every, rocm = (get_subscription(runtime.db, WORKSPACE, channel, REPO, RELEASES) for channel in ("C5", "C6"))
    first = post_release(poster, every, release)
    again = post_release(poster, every, release)
    assert first.sent == 2 and again.sent == 0 and len(slack.delivered("C5")) == 2
    nothing = post_release(poster, rocm, release)  # v0.1.1 holds no rocm PR: nothing to say
    assert nothing.sent == 0 and slack.posts("C6") == []


def test_a_person_gets_release_threads_by_direct_message(runtime, slack, released):
    _, built = released
    said = execute(runtime, "me subscribe releases rocm", WORKSPACE, channel="C0TEAM", user="U0BOB",
                   now=built.published["v0.2.0"] + timedelta(minutes=1))
    assert said.text.startswith("You now get a thread for each new release of acme/engine (`rocm`), by direct message."
                                " The first comes when the next release is published.")
    posts(runtime).run()
    parents, replies = slack.thread(dm_channel("U0BOB"))
    assert len(parents) == 1 and "17 PRs in rocm since v0.2.0" in parents[0]["text"] and replies
    assert slack.posts("U0BOB") == []  # to the direct messages Slack opened, not to the user ID


def test_a_person_following_their_own_prs_is_told_once_which_release_shipped_them(runtime, slack, released):
    _, built = released
    since = built.published["v0.2.0"] + timedelta(minutes=1)
    for user, login in (("U0DEV4", "dev-4"), ("U0LATE", None)):
        if login:
            assert not execute(runtime, f"me github {login}", WORKSPACE, channel="C0TEAM", user=user, now=since).error
        said = execute(runtime, "me subscribe my-prs", WORKSPACE, channel="C0TEAM", user=user, now=since)
        assert not said.error, said.text
    posts(runtime).run()
    [message] = slack.delivered(dm_channel("U0DEV4"))
    text = shown(message.params)
    earlier = {number for tag, numbers in built.ranges.items() if tag != "v0.3.0" for number in numbers}
    mine = [n for n in built.ranges["v0.3.0"] if n % 11 == 4 and n not in earlier]
    assert mine and text.startswith(
        f"*Your {len(mine)} PRs shipped in <https://github.example/acme/engine/releases/tag/v0.3.0|v0.3.0>*, published ")
    assert [int(part.split(" ")[0]) for part in text.split("|#")[1:]] == mine  # theirs, shipped first here, once each
    assert slack.posts(dm_channel("U0LATE")) == []  # no login linked: nothing yet

    posts(runtime).run()  # another tick, another process: nothing again
    assert len(slack.delivered(dm_channel("U0DEV4"))) == 1
    assert not execute(runtime, "me github dev-5", WORKSPACE, channel="C0TEAM", user="U0LATE", now=since).error
    posts(runtime).run()  # linked since: v0.3.0 comes now, with dev-5's PRs
    [late] = slack.delivered(dm_channel("U0LATE"))
    assert "shipped in <https://github.example/acme/engine/releases/tag/v0.3.0|v0.3.0>" in shown(late.params)


def test_each_workspace_gets_its_own_release_threads_with_its_own_token(runtime, installable, released):
    """Two workspaces installed through Add to Slack, with the same channel and user IDs: each subscription's
    threads go to its own workspace, with that workspace's token, whatever the other follows."""
    slack, served = installable.slack, installable.runtime
    for team in (ACME, GLOBEX):
        assert install(installable.base, team).status_code == 200
    _, built = released
    since = built.published["v0.2.0"] + timedelta(minutes=1)
    for team in (ACME, GLOBEX):  # one channel ID in both, through one filter: two subscriptions, two threads
        said = execute(served, "subscribe releases rocm", Team(team), channel=CHANNEL, user="U0ALICE", now=since)
        assert said.text.startswith("This channel now gets a thread for each new release"), said.text
    execute(served, "subscribe releases", Team(GLOBEX), channel="C0ALL", user="U0ALICE", now=since)
    execute(served, "me subscribe releases", Team(GLOBEX), channel=CHANNEL, user="U0BOB", now=since)

    installable.scheduler().tick()
    for team in (ACME, GLOBEX):
        parents, replies = slack.thread(CHANNEL, team)
        assert len(parents) == 1 and "17 PRs in rocm since v0.2.0" in parents[0]["text"] and replies
        assert {call.token for call in slack.posts(CHANNEL, team)} == {token_of(served, team)}
    assert len(slack.thread("C0ALL", GLOBEX)[0]) == 1 and slack.thread("C0ALL", ACME) == ([], [])
    assert len(slack.thread(dm_channel("U0BOB"), GLOBEX)[0]) == 1 and slack.thread(dm_channel("U0BOB"), ACME) == ([], [])
    assert {call.token for call in slack.posts(team=GLOBEX)} == {token_of(served, GLOBEX)}

    count = len(slack.posts())
    installable.scheduler().tick()  # another process: every thread is out, in both workspaces
    assert len(slack.posts()) == count

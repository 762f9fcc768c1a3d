import threading
import time
from datetime import date, datetime, timedelta

import pytest
from conftest import LA
from servers.github_api import day_of_pulls
from servers.slack_api import BOT_TOKEN, Fault
from slack_helpers import LOUD_TITLE, REPO, WORKSPACE, import_fixtures, of_channel, seed_day
from slack_sdk.errors import SlackApiError
from waiting import wait_past

from bot.config import Settings
from bot.runtime import Runtime
from bot.slack.app import slack_client
from bot.slack.daily import DailyPoster, Pacer
from store.subscription.cadence import Cadence
from store.subscription.filter import load_filter
from store.tables.posts import PostKey, claim_post, get_post
from store.tables.subscriptions import subscribe
from store.tables.teams import NO_TEAM

DAY = date(2026, 3, 4)


@pytest.fixture
def poster(runtime, slack, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("PRDIGEST_SLACK_API_URL", slack.api_url)
    return make_poster(runtime)


def make_poster(runtime, pace: float = 0.0) -> DailyPoster:
    """A poster with its own Slack client, as a freshly started process would have."""
    settings = Settings.from_env()
    return DailyPoster(slack_client(settings), Runtime(settings), Pacer(pace))


def texts(calls):
    return [call.params["text"] for call in calls]


def shown(calls):
    """What people see: the text of every block (the `text` field is only the notification fallback)."""
    return "\n".join(block["text"]["text"] for call in calls for block in call.params["blocks"])


def test_the_report_is_a_parent_and_a_thread(runtime, slack, poster):
    seed_day(runtime.db, DAY, 30)
    seed_day(runtime.db, DAY, 5, start=3000, type="trivial", areas=["docs"])
    outcome = poster.post(of_channel("C1"), DAY)
    posts = slack.posts("C1")
    parent, replies = posts[0], posts[1:]
    assert parent.params.get("thread_ts") is None
    assert "*engine: merged PRs for 2026-03-04 (PST)*" in parent.params["text"]
    assert "35 merged: 30 substantial, 5 trivial" in parent.params["text"]
    assert replies and all(call.params["thread_ts"] == outcome.post.parent_ts for call in replies)
    assert all(call.params["unfurl_links"] is False for call in posts)
    thread = shown(replies)
    for number in [*range(1000, 1030), *range(3000, 3005)]:
        assert f"/pull/{number}|#{number} " in thread
    assert thread.index("*trivial* (5) _\u2014 any PR's full summary: `/prdigest pr N`_") > thread.index("#1029")
    record = get_post(runtime.db, "C1", REPO, DAY, team=WORKSPACE)
    assert record.state == "done" and record.parent_ts == outcome.post.parent_ts
    assert record.replies_sent == len(replies) == outcome.sent - 1


def test_running_again_posts_nothing(runtime, slack, poster):
    seed_day(runtime.db, DAY, 3)
    poster.post(of_channel("C1"), DAY)
    count = len(slack.posts())
    again = make_poster(runtime).post(of_channel("C1"), DAY)
    assert again.sent == 0 and len(slack.posts()) == count
    assert again.describe().startswith("already posted to C1 for 2026-03-04")


def test_a_crash_midway_resumes_the_same_thread(runtime, slack, poster):
    seed_day(runtime.db, DAY, 120)  # parent + 3 replies
    # The third message is refused for good, as a process dying there would leave it.
    slack.fail("chat.postMessage", None, None, Fault(status=200, error="fatal_error"))
    with pytest.raises(SlackApiError):
        poster.post(of_channel("C1"), DAY)
    planned = get_post(runtime.db, "C1", REPO, DAY, team=WORKSPACE)
    assert planned.state == "posting" and planned.replies_sent == 1 and planned.parent_ts

    # Meanwhile the store changes; the resumed thread still sends what was planned.
    seed_day(runtime.db, DAY, 5, start=5000)
    resumed = make_poster(runtime).post(of_channel("C1"), DAY)
    delivered = slack.delivered("C1")
    assert resumed.sent == len(planned.replies) - 1
    assert all(call.params.get("thread_ts") == planned.parent_ts for call in delivered[1:])
    assert texts(delivered) == [message["text"] for message in planned.messages]
    assert get_post(runtime.db, "C1", REPO, DAY, team=WORKSPACE).state == "done"
    assert "#5000" not in shown(delivered)


def test_429_waits_retry_after_and_loses_nothing(runtime, slack, poster):
    seed_day(runtime.db, DAY, 60)
    slack.fail("chat.postMessage", Fault(429, {"Retry-After": "1"}))  # the parent
    slack.fail("chat.postMessage", Fault(429, {"Retry-After": "1"}))  # its retry too
    started = time.monotonic()
    outcome = poster.post(of_channel("C1"), DAY)
    assert time.monotonic() - started >= 2
    attempts, accepted = slack.posts("C1"), slack.delivered("C1")
    assert len(attempts) == len(accepted) + 2
    assert len(accepted) == outcome.sent == len(outcome.post.messages)
    assert texts(accepted) == [message["text"] for message in outcome.post.messages]
    assert attempts[1].at - attempts[0].at >= 0.9 and attempts[2].at - attempts[1].at >= 0.9  # Retry-After honoured


def test_posts_to_one_channel_are_paced(runtime, slack, poster):
    seed_day(runtime.db, DAY, 120)
    make_poster(runtime, pace=0.3).post(of_channel("C1"), DAY)
    stamps = [call.at for call in slack.posts("C1")]
    assert len(stamps) >= 4
    # Slots 0.3 s apart. Message n+1 waits for its slot after Slack answered message n, which arrived before it
    # was answered; so message n+2 arrives at least 0.3 s after message n, however long each request took on
    # the way (which would blur the gap between neighbours on a busy machine), and the thread spreads out.
    assert all(stamps[n + 2] - stamps[n] >= 0.3 for n in range(len(stamps) - 2))
    assert stamps[-1] - stamps[0] >= 0.3 * (len(stamps) - 2)


def test_a_channel_filtered_by_area(runtime, slack, poster):
    seed_day(runtime.db, DAY, 3, areas=["rocm"])
    seed_day(runtime.db, DAY, 4, start=2000, areas=["core"])
    poster.post(of_channel("C1", "rocm"), DAY)
    body = shown(slack.posts("C1"))
    assert "merged PRs in rocm for 2026-03-04" in body and "3 merged" in body
    assert "#2000" not in body and "#1002" in body


def test_a_day_without_prs_posts_nothing_and_is_recorded(runtime, slack, poster):
    outcome = poster.post(of_channel("C1"), DAY)
    assert slack.posts() == [] and outcome.post.state == "empty"
    assert "nothing merged on 2026-03-04" in outcome.describe()
    seed_day(runtime.db, DAY, 2)  # recorded: a late import does not post it twice a day later
    assert make_poster(runtime).post(of_channel("C1"), DAY).sent == 0


def test_every_message_within_slack_limits(runtime, slack, poster):
    seed_day(runtime.db, DAY, 150, title="[Core] " + "&<>" * 300, what="Long. " * 600)
    poster.post(of_channel("C1"), DAY)
    for call in slack.posts("C1"):
        blocks = call.params["blocks"]
        assert 0 < len(blocks) <= 50
        for block in blocks:
            assert len(block["text"]["text"]) <= 3000
            assert block["text"]["verbatim"] is True
        assert len(call.params["text"]) <= 4000


def test_untrusted_title_is_inert_in_the_posted_report(runtime, slack, poster):
    import_fixtures(runtime.db)
    poster.post(of_channel("C1"), date(2026, 3, 8))
    for call in slack.posts("C1"):
        assert LOUD_TITLE not in call.params["text"]
        for block in call.params["blocks"]:
            assert LOUD_TITLE not in block["text"]["text"]
    assert any("&lt;!channel&gt;" in call.params["text"] for call in slack.posts("C1"))


def test_post_daily_command(run_cli, slack, monkeypatch, runtime):
    seed_day(runtime.db, DAY, 3)
    monkeypatch.setenv("PRDIGEST_SLACK_API_URL", slack.api_url)
    dry = run_cli("post-daily", "--channel", "C9", "--date", "2026-03-04", "--dry-run")
    assert dry.code == 0 and "3 merged" in dry.out and "nothing posted" in dry.err
    assert slack.posts() == [] and get_post(runtime.db, "C9", REPO, DAY) is None

    no_token = run_cli("post-daily", "--channel", "C9", "--date", "2026-03-04")
    assert no_token.code == 1 and "SLACK_BOT_TOKEN is not set" in no_token.err

    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    done = run_cli("post-daily", "--channel", "C9", "--date", "2026-03-04")
    assert done.code == 0, done.err
    assert done.out.startswith("posted 2 message(s) to C9 for 2026-03-04")
    again = run_cli("post-daily", "--channel", "C9", "--date", "2026-03-04")
    assert again.out.startswith("already posted") and len(slack.posts()) == 2

    slack.fail("chat.postMessage", Fault(status=200, error="channel_not_found"))
    refused = run_cli("post-daily", "--channel", "C404", "--date", "2026-03-04")
    assert refused.code == 1
    assert refused.err.strip() == (
        "prdigest: error: Slack refused the post to C404: channel_not_found; running the command again resumes the thread"
    )


def test_post_daily_uses_the_channel_subscription_areas(run_cli, slack, monkeypatch, runtime):
    seed_day(runtime.db, DAY, 2, areas=["rocm"])
    seed_day(runtime.db, DAY, 2, start=2000, areas=["core"])
    subscribe(runtime.db, NO_TEAM, "C7", REPO, load_filter("rocm"), Cadence(), None, datetime(2026, 1, 1, tzinfo=LA))
    dry = run_cli("post-daily", "--channel", "C7", "--date", "2026-03-04", "--dry-run")
    assert "in rocm" in dry.out and "2 merged" in dry.out
    override = run_cli("post-daily", "--channel", "C7", "--date", "2026-03-04", "--dry-run", "--area", "core")
    assert "in core" in override.out
    bad = run_cli("post-daily", "--channel", "C7", "--area", "gardening", "--dry-run")
    assert bad.code == 2 and "unknown area" in bad.err


def test_post_daily_ingests_before_posting(run_cli, slack, github, monkeypatch, runtime):
    yesterday = datetime.now(LA).date() - timedelta(days=1)
    github.add(REPO, *day_of_pulls(yesterday, 3, LA, first_number=7000))
    monkeypatch.setenv("PRDIGEST_SLACK_API_URL", slack.api_url)
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    done = run_cli("post-daily", "--channel", "C9")
    assert done.code == 0, done.err
    body = shown(slack.posts("C9"))
    assert f"for {yesterday.isoformat()}" in body and "3 merged" in body
    assert all(f"#{number} " in body for number in (7000, 7001, 7002))


def test_post_daily_posts_from_the_store_when_github_is_down(run_cli, slack, github, monkeypatch, runtime):
    from servers.github_api import Fault as GitHubFault

    seed_day(runtime.db, DAY, 2)
    github.fail(GitHubFault(429, {"Retry-After": "3600"}, "Too Many Requests"), times=100)  # unavailable for an hour
    monkeypatch.setenv("PRDIGEST_SLACK_API_URL", slack.api_url)
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("PRDIGEST_GITHUB_MAX_WAIT", "1")
    done = run_cli("post-daily", "--channel", "C9", "--date", DAY.isoformat())
    assert done.code == 0
    assert done.err.startswith("prdigest: warning: ingest of acme/engine failed, posting from the store:")
    assert len(done.err.strip().splitlines()) == 1
    assert "2 merged" in slack.posts("C9")[0].params["text"]


def test_dry_run_prints_the_whole_thread(run_cli, runtime):
    seed_day(runtime.db, DAY, 120)
    dry = run_cli("post-daily", "--channel", "C9", "--date", DAY.isoformat(), "--dry-run")
    assert all(f"|#{number} " in dry.out for number in range(1000, 1120))
    assert "dry run: 4 message(s) for C9; nothing posted" in dry.err


def thread_texts(slack, channel):
    parents, replies = slack.thread(channel)
    return [message["text"] for message in parents + replies], parents


@pytest.mark.parametrize("fault", [Fault(500, {}, accept=True), Fault(accept=True, drop=True)], ids=["500", "dropped"])
@pytest.mark.parametrize("part", [0, 2], ids=["parent", "reply"])
def test_a_lost_answer_is_read_back_not_sent_again(runtime, slack, poster, fault, part):
    seed_day(runtime.db, DAY, 120)
    slack.fail("chat.postMessage", *[None] * part, fault)  # Slack accepts this one, but its answer is lost
    outcome = poster.post(of_channel("C1"), DAY)
    shown_texts, parents = thread_texts(slack, "C1")
    assert len(parents) == 1 and shown_texts == [message["text"] for message in outcome.post.messages]
    assert len(slack.posts("C1")) == len(outcome.post.messages)  # nothing was sent twice
    assert slack.calls_to("conversations.history" if part == 0 else "conversations.replies")
    assert outcome.post.state == "done" and outcome.post.parent_ts == parents[0]["ts"]


def test_every_message_says_which_post_and_part_it_is(runtime, slack, poster):
    seed_day(runtime.db, DAY, 60, areas=["rocm"])
    poster.post(of_channel("C1", "rocm"), DAY)
    metadata = [call.params["metadata"] for call in slack.posts("C1")]
    assert {meta["event_type"] for meta in metadata} == {"prdigest_post"}
    assert [meta["event_payload"] for meta in metadata] == [
        {"post": "C1 acme/engine 2026-03-04 rocm", "part": part} for part in range(len(metadata))
    ]


def test_a_server_error_on_a_read_is_retried(runtime, slack, poster):
    seed_day(runtime.db, DAY, 60)
    slack.fail("chat.postMessage", Fault(502, {}, accept=True))
    slack.fail("conversations.history", Fault(502, {}), Fault(504, {}))
    poster.post(of_channel("C1"), DAY)
    assert len(slack.thread("C1")[0]) == 1
    assert [call.ok for call in slack.calls_to("conversations.history")] == [False, False, True]


def test_without_history_scope_a_lost_answer_is_sent_again_with_one_warning(runtime, slack, poster, caplog):
    seed_day(runtime.db, DAY, 120)
    slack.fail("chat.postMessage", Fault(500, {}, accept=True), None, Fault(500, {}, accept=True))
    slack.fail("conversations.history", Fault(200, error="missing_scope"))
    slack.fail("conversations.replies", Fault(200, error="missing_scope"))
    outcome = poster.post(of_channel("C1"), DAY)
    parents, replies = slack.thread("C1")
    assert len(parents) == 2 and len(replies) == len(outcome.post.replies) + 1  # as before read-back existed
    warnings = [r.getMessage() for r in caplog.records if "channels:history" in r.getMessage()]
    assert len(warnings) == 1 and "missing_scope" in warnings[0]


def test_a_second_poster_leaves_a_live_claim_alone(runtime, slack, poster):
    seed_day(runtime.db, DAY, 60)
    first = make_poster(runtime)
    claimed = claim_post(runtime.db, PostKey.of("C1", REPO, DAY, team=WORKSPACE), first.owner, lambda: [{"text": "x", "blocks": []}],
                         60, time.time())
    assert claimed is not None
    outcome = make_poster(runtime).post(of_channel("C1"), DAY)
    assert outcome.post is None and outcome.describe() == "being posted to C1 for 2026-03-04 by another process; nothing sent"
    assert slack.posts() == []


def test_a_poster_waiting_out_429s_keeps_its_claim(runtime, slack, poster, monkeypatch):
    lease = 2  # renewed every lease/3 s: a busy machine may delay a renewal by most of a second and still keep it
    monkeypatch.setenv("PRDIGEST_POST_LEASE", str(lease))
    seed_day(runtime.db, DAY, 3)
    slack.fail("chat.postMessage", Fault(429, {"Retry-After": "5"}))
    first, outcomes = make_poster(runtime), []
    waiting = threading.Thread(target=lambda: outcomes.append(first.post(of_channel("C1"), DAY)))
    waiting.start()
    slack.wait_for(lambda s: s.posts("C1"))  # refused with 429: the first poster now waits two and a half leases
    # The claim was taken before that, so the lease it was taken with has run out once this moment passes.
    wait_past(time.time() + lease, "the end of the first poster's original lease")
    second = make_poster(runtime).post(of_channel("C1"), DAY)
    waiting.join()
    assert second.post is None  # the claim was renewed while its holder waited
    assert outcomes[0].sent == 2 and len(slack.thread("C1")[0]) == 1

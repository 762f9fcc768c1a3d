"""Two repositories in one bot, end to end.

Commands and questions go to the real `prdigest serve --http` process as signed
Slack requests and come back through the fake Slack. Its channels: C0BOTH follows
both repositories, C0ASCEND only vllm-ascend, C0NONE nothing (so it covers every
configured one). The daily threads come from the in-process scheduler, which
first ingests both repositories from the fake GitHub.
"""
import itertools
import re
import time
from datetime import date, datetime, timedelta
from datetime import time as clock_time
from typing import Any

import pytest
from conftest import LA
from freezegun import freeze_time
from servers.github_api import FakeGitHub, day_of_pulls
from servers.slack_api import BOT_TOKEN, FakeSlack, home_opened, mention_event
from slack_helpers import WORKSPACE, make_pr, one_team, serve_http, shown

from bot.config import Settings
from bot.runtime import Runtime
from bot.slack.daily import Pacer, repo_ingester
from bot.slack.scheduler import Scheduler
from store.db import open_db
from store.subscription.cadence import DAILY, Cadence
from store.subscription.filter import EVERYTHING
from store.tables.prs import known_repos, save_prs
from store.tables.subscriptions import subscribe
from store.tables.teams import NO_TEAM

VLLM, ASCEND = "vllm-project/vllm", "vllm-project/vllm-ascend"
BOTH = f"{VLLM},{ASCEND}"
# The operator's areas file: vllm-ascend has no ROCm, and an area of its own.
AREAS_TOML = f"""
[repos."{ASCEND}"]
drop = ["rocm"]
[repos."{ASCEND}".areas.ascend]
aliases = ["npu"]
files = ["^vllm_ascend/ops/"]
"""
NOT_FOLLOWED = (
    f"`acme/engine` is not a repository prdigest follows here (it follows {VLLM}, {ASCEND});"
    " add it to PRDIGEST_REPOS to follow it"
)
AMBIGUOUS_6000 = f"#6000 is in 2 repositories: which one? Ask again with `{VLLM}#6000` or `{ASCEND}#6000`."
SETTLE = 0.15  # a reply's messages go out one after another: this long with no more, and the reply is whole

# ---------------------------------------------------------------- PRs of both repositories

TODAY = datetime.now(LA).date()


def day(days_ago: int) -> str:
    return (TODAY - timedelta(days=days_ago)).isoformat()


def pr(repo: str, number: int, days_ago: int, title: str, minute: int = 1, **fields: Any):
    """A PR merged just after midnight, `days_ago` local days back: in the past whenever the tests run."""
    merged_at = datetime.combine(TODAY - timedelta(days=days_ago), clock_time(0, minute), tzinfo=LA)
    return make_pr(number, merged_at, title, repo=repo, url=f"https://github.com/{repo}/pull/{number}", **fields)


# Both have a #6000, merged yesterday; every other number is in one repository only.
STORE = [
    pr(VLLM, 5001, 0, "[Core] Faster scheduler step"),
    pr(VLLM, 5002, 0, "[ROCm] Fix paged attention stride", minute=2, areas=["rocm"]),
    pr(VLLM, 6000, 1, "[Core] Prefix cache hit counter"),
    pr(VLLM, 5000, 2, "[Core] Older core change"),
    pr(ASCEND, 7001, 0, "[Ascend] Fused NPU rotary op", areas=["ascend"], files=["vllm_ascend/ops/rotary.py"]),
    pr(ASCEND, 6000, 1, "[Ascend] NPU graph capture", areas=["ascend"], files=["vllm_ascend/ops/graph.py"]),
]


def link(repo: str, number: int) -> str:
    """How a message links a PR (the label follows)."""
    return f"<https://github.com/{repo}/pull/{number}|#{number}"


def head(repo: str, scope: str = "") -> str:
    """The start of a report's first line, up to its period."""
    return f"*{repo.split('/')[1]}: merged PRs{scope} for "


def summary(repo: str, number: int, title: str) -> str:
    """The first line of `/prdigest pr N`."""
    return f"*{link(repo, number)} {title}>*\n"


# ---------------------------------------------------------------- the bot, served over HTTP

@pytest.fixture(scope="module")
def bot(tmp_path_factory):
    """`prdigest serve --http` following both repositories, over the PRs above and the channels' subscriptions."""
    folder = tmp_path_factory.mktemp("repos")
    (folder / "areas.toml").write_text(AREAS_TOML)
    db = open_db(folder / "prdigest.db")
    save_prs(db, STORE)
    for channel, repo in (("C0BOTH", VLLM), ("C0BOTH", ASCEND), ("C0ASCEND", ASCEND)):
        subscribe(db, NO_TEAM, channel, repo, EVERYTHING, Cadence(DAILY, clock_time(9, 0)), "U0ALICE", datetime.now(LA))
    db.close()
    with FakeSlack() as slack, FakeGitHub({VLLM: [], ASCEND: []}) as github:
        with serve_http(folder / "prdigest.db", slack, PRDIGEST_REPOS=BOTH, PRDIGEST_GITHUB_API_URL=github.url,
                        PRDIGEST_AREAS=str(folder / "areas.toml")) as served:
            yield served


@pytest.fixture
def serve(bot):
    bot.slack.reset()
    return bot


_hooks = itertools.count()
_mentions = itertools.count(1)


def responses(bot, text: str, channel: str, messages: int = 1) -> list[dict[str, Any]]:
    """`/prdigest TEXT` typed in `channel`: what the reply sent, which must be exactly `messages` messages."""
    hook = f"reply-{next(_hooks)}"
    assert bot.command(text, hook, channel=channel).status_code == 200
    bot.slack.wait_for(lambda s: len(s.responses(hook)) >= messages)
    time.sleep(SETTLE)
    sent = [call.params for call in bot.slack.responses(hook)]
    assert len(sent) == messages, [params["text"] for params in sent]
    return sent


def run(bot, text: str, channel: str, messages: int = 1) -> list[str]:
    """The text of each message answering `/prdigest TEXT` in `channel`."""
    return [params["text"] for params in responses(bot, text, channel, messages)]


def ask(bot, question: str, channel: str, thread: str | None = None) -> tuple[str, str]:
    """@prdigest QUESTION in `channel` (in `thread` when given): what the answer shows, and the mention's ts."""
    ts = f"1760000000.{next(_mentions):06d}"
    answered = len(bot.slack.calls_to("chat.update"))
    bot.send(*mention_event(f"<@UPRDIGEST> {question}", ts=ts, channel=channel, thread_ts=thread))
    bot.slack.wait_for(lambda s: len(s.calls_to("chat.update")) > answered)
    update = bot.slack.calls_to("chat.update")[answered].params
    assert update["channel"] == channel
    return shown(update), ts


def sections(answer: str) -> dict[str, str]:
    """An answer cut at each repository's bold heading: {repository: what stands under it}."""
    parts: dict[str, str] = {}
    for line in answer.split("\n"):
        if line in (f"*{VLLM}*", f"*{ASCEND}*"):
            parts[line.strip("*")] = ""
        elif parts:
            parts[list(parts)[-1]] += line + "\n"
    return parts


# ---------------------------------------------------------------- subscriptions

def test_a_channel_subscribes_to_two_repositories_and_another_has_none(serve):
    [first] = responses(serve, f"subscribe {VLLM} at 07:30", "C0SUBS")
    assert first["response_type"] == "in_channel"
    assert first["text"].startswith(
        f"This channel now gets the daily report of {VLLM} at 07:30 America/Los_Angeles time (set by <@U0ALICE>)."
    )
    [second] = run(serve, "subscribe vllm-ascend npu", "C0SUBS")  # its bare name, and an area only it has
    assert second.startswith(f"This channel now gets the daily report of {ASCEND} (`ascend`) at 09:00 ")
    assert second.count("This channel now gets") == 1

    assert run(serve, "subscriptions", "C0SUBS") == [
        f"This channel gets the daily report of {VLLM} at 07:30 America/Los_Angeles time.\n"
        f"This channel gets the daily report of {ASCEND} (`ascend`) at 09:00 America/Los_Angeles time."
    ]
    [none] = run(serve, "subscriptions", "C0NONE")
    assert none.startswith("This channel gets no reports, live alerts or release threads.")

    assert run(serve, "unsubscribe vllm-ascend daily", "C0SUBS") == [
        f"This channel no longer gets the daily report of {ASCEND} (`ascend`) at 09:00 America/Los_Angeles time."
    ]
    assert run(serve, "subscriptions", "C0SUBS") == [
        f"This channel gets the daily report of {VLLM} at 07:30 America/Los_Angeles time."
    ]


def test_subscribing_without_naming_a_repository_takes_every_configured_one(serve):
    [reply] = run(serve, "subscribe at 08:15", "C0ALL")
    lines = reply.split("\n")
    assert [line.split(" at 08:15 ")[0] for line in lines[:-1]] == [
        f"This channel now gets the daily report of {VLLM}", f"This channel now gets the daily report of {ASCEND}",
    ]
    assert lines[-1].startswith("_A private channel")


def test_subscribing_to_an_area_only_one_repository_has_takes_that_one(serve):
    [reply] = run(serve, "subscribe npu live", "C0NPU")
    assert reply.split("\n")[0] == f"This channel now gets live alerts of {ASCEND} (`ascend`) as PRs merge (set by <@U0ALICE>). " \
        "The first comes with the next ingest."
    assert len(reply.split("\n")) == 2
    refused = run(serve, "subscribe nosuch", "C0NPU")[0]
    assert refused.startswith("`nosuch` is not a filter term or an area")


# ---------------------------------------------------------------- reports, grouped by repository

def test_today_covers_the_channels_repositories_each_with_its_own_messages(serve):
    both = run(serve, "today", "C0BOTH", messages=4)  # each repository: its summary, then its PRs
    assert both[0].startswith(head(VLLM) + day(0)) and "\n2 merged: 2 substantial" in both[0]
    assert link(VLLM, 5001) in both[1] and link(VLLM, 5002) in both[1] and ASCEND not in both[0] + both[1]
    assert both[2].startswith(head(ASCEND) + day(0)) and "\n1 merged: 1 substantial" in both[2]
    assert link(ASCEND, 7001) in both[3] and f"{VLLM}/" not in both[2] + both[3]

    # No subscription: every configured repository. The clock in "as of HH:MM" may have moved on between replies.
    assert _without_clock(run(serve, "today", "C0NONE", messages=4)) == _without_clock(both)
    assert _without_clock(run(serve, "today", "C0ASCEND", messages=2)) == _without_clock(both[2:])


def _without_clock(messages: list[str]) -> list[str]:
    return [re.sub(r", as of \d{2}:\d{2}", "", message) for message in messages]


def test_the_home_tab_shows_each_repositorys_latest_day(serve):
    serve.send(*home_opened("EvHOME2"))
    serve.slack.wait_for(lambda s: s.calls_to("views.publish"))
    blocks = serve.slack.calls_to("views.publish")[0].params["view"]["blocks"]
    last_divider = max(n for n, block in enumerate(blocks) if block["type"] == "divider")  # after the subscriptions
    sections = [block["text"]["text"] for block in blocks[last_divider + 1:]]
    assert sections[0].startswith(head(VLLM) + day(0)) and link(VLLM, 5002) in sections[0]
    assert sections[1].startswith(head(ASCEND) + day(0)) and link(ASCEND, 7001) in sections[1]
    assert sections[2].startswith(f"*/prdigest*: what merged in {VLLM}, {ASCEND}")


def test_a_named_repository_limits_a_report(serve):
    vllm = run(serve, f"today {VLLM}", "C0ASCEND", messages=2)  # not the channel's repository, but named
    assert vllm[0].startswith(head(VLLM) + day(0)) and ASCEND not in "".join(vllm)
    linked = run(serve, f"today <https://github.com/{ASCEND}>", "C0NONE", messages=2)
    assert linked[0].startswith(head(ASCEND) + day(0)) and f"{VLLM}/" not in "".join(linked)


def test_a_repository_with_nothing_gets_one_line(serve):
    replies = run(serve, day(2), "C0BOTH", messages=3)
    assert replies[0].startswith(head(VLLM) + day(2)) and link(VLLM, 5000) in replies[1]
    assert replies[2] == f"Nothing merged in {ASCEND} for {day(2)} (PST)."


def test_an_area_covers_the_repositories_that_have_it(serve):
    rocm = run(serve, "area rocm", "C0BOTH", messages=2)  # vllm-ascend has no ROCm: not even a line
    assert rocm[0].startswith(head(VLLM, " in rocm")) and ASCEND not in "".join(rocm)
    npu = run(serve, "area npu", "C0BOTH", messages=2)
    assert npu[0].startswith(head(ASCEND, " in ascend"))
    assert link(ASCEND, 7001) in npu[1] and link(ASCEND, 6000) in npu[1]

    core = run(serve, "area core", "C0BOTH", messages=3)
    assert core[0].startswith(head(VLLM, " in core")) and "\n3 merged" in core[0]
    assert core[2].startswith(f"Nothing merged in core in {ASCEND} for {day(6)}..{day(0)} (PST), as of ")

    [unknown] = run(serve, "area gardening", "C0BOTH")
    assert unknown.startswith("unknown area 'gardening'") and "\nUsage: `/prdigest area NAME [when]`" in unknown


def test_an_area_alias_with_a_slash_is_not_taken_for_a_repository(serve):
    for alias, area in (("ci/build", "ci"), ("p/d", "kv-connector")):  # neither merged into lately
        [reply] = run(serve, f"area {alias}", "C0BOTH")
        lines = reply.split("\n")
        assert lines[0].startswith(f"Nothing merged in {area} in {VLLM} for "), reply
        assert [line for line in lines if line.startswith("Nothing merged")][1].startswith(
            f"Nothing merged in {area} in {ASCEND} for ")


# ---------------------------------------------------------------- repositories named, PR numbers

def test_an_unknown_repository_is_one_line_for_commands_but_not_for_search_or_questions(serve):
    for command in ("today acme/engine", "area rocm acme/engine", "subscribe acme/engine", "pr acme/engine#1",
                    "pr <https://github.com/acme/engine/pull/5001>", "today <https://github.com/acme/engine>"):
        [reply] = run(serve, command, "C0NONE")
        first, usage = reply.split("\n")
        assert first == NOT_FOLLOWED and usage.startswith("Usage: `/prdigest "), command
    assert run(serve, "subscriptions", "C0NONE")[0].startswith("This channel gets no reports")

    assert run(serve, "search acme/engine", "C0NONE") == [
        f"Nothing in {VLLM} matched \u201cacme/engine\u201d.\nNothing in {ASCEND} matched \u201cacme/engine\u201d."
    ]
    answered, _ = ask(serve, "what changed in acme/engine today?", "C0NONE")
    assert "is not a repository" not in answered and link(VLLM, 5001) in answered


def test_a_question_linking_a_pr_of_an_unfollowed_repository_is_not_answered_with_another_pr(serve):
    answered, _ = ask(serve, "what is <https://github.com/acme/engine/pull/5001> about?", "C0NONE")
    assert link(VLLM, 5001) not in answered
    assert answered.startswith("`acme/engine` is not a repository prdigest follows here (it follows ")


def test_a_pr_number_resolves_in_the_channels_repositories_first(serve):
    ascend_6000 = summary(ASCEND, 6000, "[Ascend] NPU graph capture")
    assert run(serve, "pr 6000", "C0NONE") == [AMBIGUOUS_6000]
    assert run(serve, "pr 6000", "C0BOTH") == [AMBIGUOUS_6000]
    assert run(serve, "pr 6000", "C0ASCEND")[0].startswith(ascend_6000)
    assert run(serve, "pr 5001", "C0ASCEND")[0].startswith(summary(VLLM, 5001, "[Core] Faster scheduler step"))
    assert run(serve, "pr 7001", "C0NONE")[0].startswith(summary(ASCEND, 7001, "[Ascend] Fused NPU rotary op"))
    assert run(serve, "pr 9999", "C0ASCEND")[0].startswith(f"{ASCEND}#9999 is not in the store")


def test_a_pr_named_with_its_repository_needs_no_question(serve):
    vllm_6000 = summary(VLLM, 6000, "[Core] Prefix cache hit counter")
    for named in (f"{VLLM}#6000", "vllm#6000", f"<https://github.com/{VLLM}/pull/6000>"):
        assert run(serve, f"pr {named}", "C0ASCEND")[0].startswith(vllm_6000), named
    ascend_6000 = summary(ASCEND, 6000, "[Ascend] NPU graph capture")
    assert run(serve, "pr vllm-ascend#6000", "C0BOTH")[0].startswith(ascend_6000)


# ---------------------------------------------------------------- questions

def test_a_question_is_answered_under_each_repository_with_cited_prs(serve):
    answered, _ = ask(serve, f"what merged on {day(0)}?", "C0BOTH")
    parts = sections(answered)
    assert list(parts) == [VLLM, ASCEND]
    assert link(VLLM, 5001) in parts[VLLM] and link(VLLM, 5002) in parts[VLLM] and ASCEND not in parts[VLLM]
    assert link(ASCEND, 7001) in parts[ASCEND] and f"{VLLM}/" not in parts[ASCEND]

    rocm, _ = ask(serve, f"what changed for ROCm on {day(0)}?", "C0NONE")  # vllm-ascend cites nothing: no heading
    assert list(sections(rocm)) == [VLLM] and link(VLLM, 5002) in rocm and link(VLLM, 5001) not in rocm


def test_a_question_naming_a_repository_covers_it_alone(serve):
    for named in (ASCEND, "vllm-ascend", f"<https://github.com/{ASCEND}>"):
        answered, _ = ask(serve, f"what merged in {named} on {day(0)}?", "C0BOTH")
        assert sections(answered) == {}, named  # one repository: no headings
        assert link(ASCEND, 7001) in answered and f"{VLLM}/" not in answered, named
    answered, _ = ask(serve, f"what did vllm merge on {day(0)}?", "C0ASCEND")
    assert link(VLLM, 5001) in answered and ASCEND not in answered


def test_an_ambiguous_pr_number_is_asked_about_and_a_thread_keeps_its_repository(serve):
    assert ask(serve, "what is #6000?", "C0NONE")[0] == AMBIGUOUS_6000
    mine, _ = ask(serve, "what is #6000?", "C0ASCEND")  # the channel's repository has it
    assert link(ASCEND, 6000) in mine and f"{VLLM}/" not in mine
    named, _ = ask(serve, f"what is {VLLM}#6000?", "C0NONE")
    assert link(VLLM, 6000) in named and ASCEND not in named

    _, thread = ask(serve, f"what merged in vllm-ascend on {day(0)}?", "C0NONE")
    follow_up, _ = ask(serve, "and what is #6000?", "C0NONE", thread=thread)
    assert link(ASCEND, 6000) in follow_up and f"{VLLM}/" not in follow_up


# ---------------------------------------------------------------- the daily threads

DAY = date(2026, 3, 4)
LONG_AGO = datetime(2026, 1, 1, tzinfo=LA)
VLLM_THREAD = "*vllm: merged PRs for 2026-03-04 (PST)*"
ASCEND_THREAD = "*vllm-ascend: merged PRs for 2026-03-04 (PST)*"
_INGESTED_LINK = re.compile(r"<https://github\.example/([\w.-]+/[\w.-]+)/pull/(\d+)\|")


@pytest.fixture
def two_repos(monkeypatch, slack):
    """Settings following both repositories, from a GitHub holding a day of PRs of each, with the same numbers."""
    pulls = {VLLM: day_of_pulls(DAY, 3, LA, first_number=7000), ASCEND: day_of_pulls(DAY, 2, LA, first_number=7000)}
    with FakeGitHub(pulls) as github:
        for name, value in {"PRDIGEST_REPOS": BOTH, "PRDIGEST_GITHUB_API_URL": github.url,
                            "SLACK_BOT_TOKEN": BOT_TOKEN, "PRDIGEST_SLACK_API_URL": slack.api_url}.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("PRDIGEST_POLL_MINUTES")  # polled, from this GitHub
        yield Settings.from_env()


def start(settings: Settings) -> Scheduler:
    """A scheduler as `serve` starts it: its own runtime, Slack client and ingestion."""
    runtime = Runtime(settings)
    return Scheduler(runtime, one_team(settings), ingest=repo_ingester(runtime), pacer=Pacer(0))


def tick_at(scheduler: Scheduler, moment: str) -> None:
    with freeze_time(moment):
        scheduler.tick()


def threads(slack: FakeSlack, channel: str) -> dict[str, list[str]]:
    """The channel's threads in the order posted: each parent's first line, and the text of its replies."""
    parents, replies = slack.thread(channel)
    return {
        parent["text"].split("\n")[0]: [reply["text"] for reply in replies if reply["thread_ts"] == parent["ts"]]
        for parent in parents
    }


def linked(replies: list[str]) -> dict[str, list[int]]:
    """The PRs a thread links to, by repository."""
    found: dict[str, list[int]] = {}
    for repo, number in _INGESTED_LINK.findall("\n".join(replies)):
        found.setdefault(repo, []).append(int(number))
    return {repo: sorted(set(numbers)) for repo, numbers in found.items()}


def test_each_subscribed_repository_gets_its_own_daily_thread_exactly_once(two_repos, slack):
    scheduler = start(two_repos)
    db = scheduler.runtime.db
    for channel, repo in (("C1", VLLM), ("C1", ASCEND), ("C2", ASCEND)):
        subscribe(db, WORKSPACE, channel, repo, EVERYTHING, Cadence(DAILY, clock_time(9, 0)), "U1", LONG_AGO)
    tick_at(scheduler, "2026-03-05T08:59:00-08:00")
    assert slack.posts() == [] and known_repos(db) == [VLLM, ASCEND]  # both ingested before anything is due

    tick_at(scheduler, "2026-03-05T09:00:00-08:00")
    c1, c2 = threads(slack, "C1"), threads(slack, "C2")
    assert list(c1) == [VLLM_THREAD, ASCEND_THREAD] and list(c2) == [ASCEND_THREAD]
    assert linked(c1[VLLM_THREAD]) == {VLLM: [7000, 7001, 7002]}
    assert linked(c1[ASCEND_THREAD]) == {ASCEND: [7000, 7001]} and c2[ASCEND_THREAD] == c1[ASCEND_THREAD]
    assert len(slack.posts()) == 6  # three parents, and a reply in each thread

    for moment in ("2026-03-05T09:01:00-08:00", "2026-03-05T13:00:00-08:00", "2026-03-06T08:59:00-08:00"):
        tick_at(scheduler, moment)
    restarted = start(two_repos)  # a new process over the same store: nothing in memory
    tick_at(restarted, "2026-03-05T09:02:00-08:00")
    tick_at(restarted, "2026-03-06T09:00:00-08:00")  # the next day's reports are due, but nothing merged that day
    assert len(slack.posts()) == 6
    assert threads(slack, "C1") == c1 and threads(slack, "C2") == c2

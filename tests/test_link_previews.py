"""PR link previews: signed `link_shared` events to the real app, answered with chat.unfurl on the fake Slack."""
import json
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import LA
from servers.github_api import FakePull
from servers.slack_api import JSON, Fault, link_shared_payload
from slack_helpers import LOUD_TITLE, REPO, WORKSPACE, Served, import_fixtures, serve_app
from waiting import wait_until

from bot.answers.commands import execute
from bot.answers.pr_refs import linked_prs
from bot.messages.preview import Preview, preview_unfurl
from store.db import open_db
from store.tables.previews import QUIET_SECONDS, claim_previews, set_previews
from store.tables.prs import get_pr
from store.tables.releases import Release, get_release, record_range, save_listed

URL = f"https://github.com/{REPO}/pull/4102"
NOW = datetime(2026, 3, 9, 9, 0, tzinfo=LA)


def link(served: Served, *urls: str, ts: str = "1740000000.000100", channel: str = "C0REPORTS", **more) -> None:
    body = json.dumps(link_shared_payload(list(urls), ts, channel=channel, **more))
    assert served.send(body, JSON).status_code == 200


def previews_on(served: Served, channel: str = "C0REPORTS") -> None:
    set_previews(served.runtime.db, WORKSPACE, channel, True, "U0ALICE", NOW)


def unfurled(served: Served, count: int = 1) -> list[dict]:
    served.slack.wait_for(lambda s: len([c for c in s.calls_to("chat.unfurl") if c.ok]) >= count)
    return [call.params for call in served.slack.calls_to("chat.unfurl") if call.ok]


def shown(unfurl: dict) -> str:
    return "\n".join(block["text"]["text"] if "text" in block else block["elements"][0]["text"] for block in unfurl["blocks"])


def quiet_second() -> None:
    # Nothing marks "the bot will send nothing more", so this watches a quiet second. Only a bug sends what it
    # looks for: a slow machine can make it miss one, never fail a correct bot.
    time.sleep(1)


def test_a_stored_pr_is_previewed_once_in_a_channel_that_opted_in(served):
    previews_on(served)
    link(served, URL)
    [call] = unfurled(served)
    assert call["channel"] == "C0REPORTS" and call["ts"] == "1740000000.000100" and list(call["unfurls"]) == [URL]
    preview = shown(call["unfurls"][URL])
    assert f"<{URL}|#4102 [ROCm][Bugfix] Fix &lt;!channel&gt; [sic] paged attention on MI300>" in preview
    assert "Fixes a wrong stride in the ROCm paged attention kernel" in preview
    assert "cache layout" not in preview  # one sentence of What changed
    assert "by ada-l \u00b7 merged 2026-03-08 \u00b7 rocm" in preview and "shipped" not in preview
    assert LOUD_TITLE not in json.dumps(call)

    # Pasted again (with a PR not previewed yet): only the new one is previewed.
    link(served, f"{URL}/files", f"https://github.com/{REPO}/pull/4090", ts="1740000000.000200")
    second = unfurled(served, 2)[1]
    assert list(second["unfurls"]) == [f"https://github.com/{REPO}/pull/4090"]


def test_a_preview_says_which_release_shipped_the_pr_or_that_none_has_yet(served):
    db = served.runtime.db
    published = datetime(2026, 3, 9, 2, 0, tzinfo=UTC)  # after both PRs merged, on Mar 8
    tag = "v0.4.0"
    save_listed(db, REPO, [Release(REPO, tag, tag, f"https://github.com/{REPO}/releases/tag/{tag}", published)], complete=True)
    assert record_range(db, get_release(db, REPO, tag), None, [4102, 4100], commits=2)
    previews_on(served)
    unreleased = f"https://github.com/{REPO}/pull/4090"
    link(served, URL, unreleased)
    [call] = unfurled(served)
    assert shown(call["unfurls"][URL]).endswith("merged 2026-03-08 · rocm, kernels, attention · Shipped in v0.4.0")
    assert shown(call["unfurls"][unreleased]).endswith(" · Not in a release yet")


def test_no_preview_in_a_channel_that_did_not_opt_in(served):
    previews_on(served, "C0OPTED")
    link(served, URL, channel="C0OTHER")
    link(served, URL, channel="C0OPTED", ts="1740000000.000300")
    unfurled(served)
    quiet_second()
    assert [call.params["channel"] for call in served.slack.calls_to("chat.unfurl")] == ["C0OPTED"]


def test_turning_previews_off_stops_them(served):
    on = execute(served.runtime, "unfurl on", WORKSPACE, channel="C0REPORTS", user="U0ALICE", now=NOW)
    assert on.public and "(turned on by <@U0ALICE>)" in on.text and "at most once in 30 minutes" in on.text
    assert "already on" in execute(served.runtime, "unfurl on", WORKSPACE, channel="C0REPORTS", now=NOW).text
    assert "are on in this channel" in execute(served.runtime, "unfurl", WORKSPACE, channel="C0REPORTS", now=NOW).text
    off = execute(served.runtime, "unfurl off", WORKSPACE, channel="C0REPORTS", now=NOW)
    assert off.public and "no longer previewed" in off.text
    bad = execute(served.runtime, "unfurl sometimes", WORKSPACE, channel="C0REPORTS", now=NOW)
    assert bad.error and bad.text.startswith("say `on` or `off`\nUsage: `/prdigest unfurl on | off`")
    assert execute(served.runtime, "unfurl on", WORKSPACE, now=NOW).error  # a terminal has no channel
    link(served, URL)
    previews_on(served, "C0MARK")
    link(served, URL, channel="C0MARK", ts="1740000000.000400")
    unfurled(served)
    quiet_second()
    assert [call.params["channel"] for call in served.slack.calls_to("chat.unfurl")] == ["C0MARK"]


def test_links_of_repositories_not_followed_are_ignored(served, github):
    github.add("someone/else", FakePull(4102, "Theirs", merged_at=datetime(2026, 3, 9, 18, 0, tzinfo=UTC)))
    previews_on(served)
    link(served, "https://github.com/someone/else/pull/4102", URL, "https://github.com/acme/engine/issues/4")
    [call] = unfurled(served)
    assert list(call["unfurls"]) == [URL]


def test_a_link_being_typed_is_left_for_when_it_is_posted(served):
    previews_on(served)
    typing = link_shared_payload([URL], "1740000000.000450", source="composer")
    served.send(json.dumps(typing), JSON)
    typing["event"]["channel"] = "C0REPORTS"  # even where Slack names the channel
    served.send(json.dumps(typing), JSON)
    link(served, URL, ts="1740000000.000500")
    [call] = unfurled(served)
    quiet_second()
    assert len(served.slack.calls_to("chat.unfurl")) == 1 and call["ts"] == "1740000000.000500"


def test_a_pr_not_in_the_store_is_fetched_from_github(served, github):
    github.add(
        REPO,
        FakePull(5000, "[Core] Faster <b>scheduler</b>", merged_at=datetime(2026, 3, 9, 18, 0, tzinfo=UTC),
                 body="Makes the scheduler pick requests in one pass. It was two.", files=["engine/core/scheduler.py"]),
        FakePull(5001, "[ROCm] Support MI355X", merged_at=None, open=True, author="raj-k",
                 body="Adds MI355X to the supported devices.", files=["engine/platforms/rocm.py"]),
        FakePull(5002, "Abandoned idea", merged_at=None),
    )
    previews_on(served)
    urls = [f"https://github.com/{REPO}/pull/{number}" for number in (5000, 5001, 5002, 5003)]
    link(served, *urls)
    [call] = unfurled(served)
    assert list(call["unfurls"]) == urls[:3]  # 5003 is nowhere
    merged, opened, closed = (shown(call["unfurls"][url]) for url in urls[:3])
    assert "#5000 [Core] Faster &lt;b&gt;scheduler&lt;/b&gt;" in merged and "merged 2026-03-09" in merged
    assert "by raj-k \u00b7 open \u00b7 rocm" in opened and "MI355X" in opened
    assert "\u00b7 closed" in closed
    # The merged PR is stored as ingest stores it; the others are not, since the store holds merged PRs.
    assert get_pr(served.runtime.db, REPO, 5000).summary.source == "extractive"
    assert get_pr(served.runtime.db, REPO, 5001) is None
    # The PR GitHub did not have was given back: added since, it is previewed the next time it is linked.
    github.add(REPO, FakePull(5003, "[Docs] Late arrival", merged_at=datetime(2026, 3, 9, 19, 0, tzinfo=UTC)))
    link(served, urls[3], ts="1740000000.000600")
    assert list(unfurled(served, 2)[1]["unfurls"]) == [urls[3]]


def test_without_ingest_a_pr_not_in_the_store_gets_no_preview(runtime, slack, github, monkeypatch):
    monkeypatch.setenv("PRDIGEST_POLL_MINUTES", "0")
    import_fixtures(runtime.db)
    github.add(REPO, FakePull(5000, "[Core] On GitHub only", merged_at=datetime(2026, 3, 9, 18, 0, tzinfo=UTC)))
    with serve_app(slack, monkeypatch) as url:
        served = Served(url, slack, runtime)
        previews_on(served)
        link(served, f"https://github.com/{REPO}/pull/5000", URL)
        [call] = unfurled(served)
    assert list(call["unfurls"]) == [URL] and github.count("/pulls/") == 0


def test_a_429_from_chat_unfurl_is_waited_out(served):
    served.slack.fail("chat.unfurl", Fault(429, {"Retry-After": "1"}))
    previews_on(served)
    link(served, URL)
    unfurled(served)
    refused, accepted = served.slack.calls_to("chat.unfurl")
    assert not refused.ok and accepted.ok and accepted.params["unfurls"] == refused.params["unfurls"]
    assert accepted.at - refused.at >= 1  # after the Retry-After, not at once


def test_a_refused_preview_is_tried_again_on_the_next_paste(served):
    served.slack.fail("chat.unfurl", Fault(200, error="cannot_unfurl_url"))
    previews_on(served)
    link(served, URL)
    served.slack.wait_for(lambda s: s.calls_to("chat.unfurl"))
    link(served, URL, ts="1740000000.000700")
    assert unfurled(served)[0]["ts"] == "1740000000.000700"


def test_two_processes_given_the_same_link_preview_it_once(runtime, slack, github, monkeypatch):
    """Two replicas of the app on one store, each getting the link (Slack retried, or a deploy overlapped)."""
    import_fixtures(runtime.db)
    previews_on(Served("", slack, runtime))
    with serve_app(slack, monkeypatch) as first, serve_app(slack, monkeypatch) as second:
        body = json.dumps(link_shared_payload([URL], "1740000000.000800"))
        replicas = [Served(url, slack, runtime) for url in (first, second)]
        sends = [threading.Thread(target=replica.send, args=(body, JSON)) for replica in replicas]
        for send in sends:
            send.start()
        for send in sends:
            send.join()
        slack.wait_for(lambda s: s.calls_to("chat.unfurl"))
        quiet_second()
    assert len(slack.calls_to("chat.unfurl")) == 1


def test_a_claim_lasts_30_minutes_across_connections(tmp_path):
    path = tmp_path / "s.db"
    one, two = open_db(path), open_db(path)
    start = 1_750_000_000.0
    assert claim_previews(one, WORKSPACE, "C1", [(REPO, 1), (REPO, 2)], start) == [(REPO, 1), (REPO, 2)]
    assert claim_previews(two, WORKSPACE, "C1", [(REPO, 1), (REPO, 3)], start + 60) == [(REPO, 3)]
    assert claim_previews(two, WORKSPACE, "C2", [(REPO, 1)], start + 60) == [(REPO, 1)]  # each channel its own
    assert claim_previews(one, WORKSPACE, "C1", [(REPO, 1)], start + QUIET_SECONDS - 1) == []
    assert claim_previews(two, WORKSPACE, "C1", [(REPO, 1)], start + QUIET_SECONDS) == [(REPO, 1)]


def test_previews_are_compact_and_bounded():
    long = Preview(
        url=URL, number=4102, title="T" * 500 + " <@U123|x> *bold*", author="a" * 300, status="open",
        areas=tuple(f"area{i}" for i in range(9)), what_changed="First sentence here. Second one.", release="Shipped in v0.9.0",
    )
    unfurl = preview_unfurl(long)
    text = shown(unfurl)
    assert len(unfurl["blocks"]) == 2 and len(text) < 600
    assert "Second one" not in text and "<@U123" not in text
    assert "area4 +4" in text and "Shipped in v0.9.0" in text


@pytest.mark.parametrize(
    ("host", "url", "found"),
    [
        ("github.com", "https://github.com/ACME/Engine/pull/7/files#diff", [(REPO, 7)]),
        ("github.com", "https://www.github.com/acme/engine/pull/8", [(REPO, 8)]),
        ("ghe.example", "https://ghe.example/acme/engine/pull/9", [(REPO, 9)]),
        ("ghe.example", "https://github.com/acme/engine/pull/9", []),
        ("github.com", "https://github.com/acme/engine/pull/10x", []),
    ],
)
def test_links_are_read_for_the_configured_host(host, url, found):
    assert linked_prs(url, host, [REPO]).prs == found


def test_the_manifest_asks_for_link_previews_and_the_shortcut():
    manifest = (Path(__file__).resolve().parents[1] / "manifest.yml").read_text()
    for needed in ("unfurl_domains:\n    - github.com\n", "- links:read ", "- links:write ", "- link_shared ",
                   "type: message\n      callback_id: prdigest_explain\n", "unfurl on|off"):
        assert needed in manifest, needed


def test_a_malformed_link_shared_event_gets_one_line(served, caplog):
    previews_on(served)
    for links in ("x", [{"url": 7}], [], [{"domain": "github.com"}]):
        event = link_shared_payload([URL], "1740000000.000900")
        event["event"]["links"] = links
        assert served.send(json.dumps(event), JSON).status_code < 500
    lines = wait_until(lambda: len(_bot_lines(caplog)) >= 4 and _bot_lines(caplog), "a line for each")
    assert len(lines) == 4 and not any(r.exc_info for r in lines) and not served.slack.calls_to("chat.unfurl")
    assert all("nothing to preview" in r.getMessage() for r in lines)


def _bot_lines(caplog) -> list:
    return [r for r in caplog.records if r.name.startswith("bot")]

""""Explain these PRs", the message shortcut: the summaries of the PRs a message names, in its thread."""
from datetime import date

from servers.github_api import FakePull
from servers.slack_api import Fault, interactive, shortcut_payload
from slack_helpers import LOUD_TITLE, REPO, Served, seed_day, shown
from waiting import wait_until

from bot.slack.explain import EXPLAIN_SHORTCUT


def shortcut(served: Served, text: str, ts: str = "1760000000.000100", hook: str = "explain", **more) -> None:
    payload = shortcut_payload(EXPLAIN_SHORTCUT, text, ts, served.slack.response_url(hook), **more)
    assert served.send(*interactive(payload)).status_code == 200


def replies(served: Served, count: int = 1) -> list[dict]:
    served.slack.wait_for(lambda s: len(s.delivered("C0REPORTS")) >= count)
    return [call.params for call in served.slack.delivered("C0REPORTS")]


def test_the_prs_a_message_names_are_explained_in_its_thread(served):
    text = (f"Did <https://github.com/{REPO}/pull/4102|the ROCm fix> land before #4090? "
            f"Also {REPO}#4085, and <https://github.com/someone/else/pull/4099>.")
    shortcut(served, text)
    [reply] = replies(served)
    assert reply["thread_ts"] == "1760000000.000100" and reply["unfurl_links"] is False
    body = shown(reply)
    assert body.startswith("*The 3 PRs this message names*")
    assert body.index("#4102") < body.index("#4090") < body.index("#4085")  # in the order named
    assert "#4099" not in body  # a repository the bot does not follow
    for section in ("What changed and why", "Technical impact", "Potential risks", "Key insights"):
        assert f"*{section}*" in body
    assert LOUD_TITLE not in str(reply) and "&lt;!channel&gt;" in body


def test_in_a_thread_the_reply_joins_that_thread(served):
    shortcut(served, "what about #4090?", ts="1760000000.000300", thread_ts="1760000000.000200")
    assert replies(served)[0]["thread_ts"] == "1760000000.000200"


def test_at_most_ten_prs_then_how_many_more(served):
    seed_day(served.runtime.db, date(2026, 3, 5), 13, start=2000)
    shortcut(served, " ".join(f"#{number}" for number in range(2000, 2013)))
    served.slack.wait_for(lambda s: "more PRs" in str(s.delivered("C0REPORTS")))
    posted = "\n".join(shown(reply) for reply in replies(served))
    assert posted.startswith("*The 13 PRs this message names*")
    assert "#2009" in posted and "#2010 " not in posted
    assert "\u2026and 3 more PRs: #2010, #2011, #2012. `/prdigest pr N` gives any one of them." in posted
    for reply in served.slack.delivered("C0REPORTS"):
        assert len(reply.params["blocks"]) <= 50


def test_a_pr_not_in_the_store_is_fetched_or_named(served, github):
    github.add(REPO, FakePull(5001, "[ROCm] Support MI355X", merged_at=None, open=True, body="Adds MI355X to the devices."))
    shortcut(served, "see #5001 and #5999")
    body = shown(replies(served)[0])
    assert "#5001 [ROCm] Support MI355X" in body and "open" in str(replies(served)[0])
    assert "Not in the store: #5999." in body


def test_a_message_naming_no_pr_gets_a_private_word(served):
    shortcut(served, "lunch at noon? https://example.com/pull/4102 <https://github.com/someone/else/pull/4099|#4099>", hook="none")
    served.slack.wait_for(lambda s: s.responses("none"))
    [said] = [call.params for call in served.slack.responses("none")]
    assert said["response_type"] == "ephemeral" and "names none by number" in said["text"]
    assert served.slack.posts() == []


def test_where_the_bot_cannot_post_the_person_still_gets_them(served):
    served.slack.fail("chat.postMessage", Fault(200, error="not_in_channel"))
    shortcut(served, "#4090", hook="private")
    served.slack.wait_for(lambda s: len(s.responses("private")) >= 2)
    note, summary = (call.params for call in served.slack.responses("private"))
    assert "not_in_channel" in note["text"] and "/invite @prdigest" in note["text"]
    assert summary["response_type"] == "ephemeral" and "#4090" in shown(summary)


def test_text_in_a_bots_attachments_counts(served, github):
    payload = shortcut_payload(EXPLAIN_SHORTCUT, "", "1760000000.000400", served.slack.response_url("bot"))
    payload["message"]["attachments"] = [{"title": "[acme/engine] Pull request merged", "title_link": f"https://github.com/{REPO}/pull/4090"}]
    served.send(*interactive(payload))
    assert "#4090" in shown(replies(served)[0])


def test_a_malformed_shortcut_gets_one_line(served, caplog):
    payload = shortcut_payload(EXPLAIN_SHORTCUT, "#4090", "1760000000.000500", served.slack.response_url("bad"))
    payload["message"] = {"text": ["#4090"], "ts": 5}
    assert served.send(*interactive(payload)).status_code < 500
    lines = wait_until(lambda: [r for r in caplog.records if r.name.startswith("bot")], "a line")
    assert len(lines) == 1 and not lines[0].exc_info and served.slack.posts() == []
    assert "without its channel or message; nothing to explain" in lines[0].getMessage()

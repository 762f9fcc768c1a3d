""""Share in channel" on private replies to `/prdigest`: the same reply posted for the channel, once."""
import threading
import time

from servers.slack_api import FakeSlack, Fault, button_click, click_payload, interactive, slash_command
from slack_helpers import Served, shown
from waiting import wait_until

from bot.messages.interactive import SHARE_ACTION, VOTE_UP_ACTION

QUIET = 1  # seconds watched for a post that must not come (only a bug sends one; a slow machine never fails this)


def command(served: Served, text: str, hook: str, count: int = 1) -> list[dict]:
    served.send(*slash_command(text, served.slack.response_url(hook)))
    served.slack.wait_for(lambda s: len(s.responses(hook)) >= count)
    return [call.params for call in served.slack.responses(hook)]


def share_id(params: dict) -> str | None:
    return next((element["value"] for block in params["blocks"] if block["type"] == "actions"
                 for element in block["elements"] if element["action_id"] == SHARE_ACTION), None)


def public(slack: FakeSlack, hook: str) -> list[dict]:
    return [call.params for call in slack.responses(hook) if call.params.get("response_type") == "in_channel"]


def test_a_private_reply_is_shared_once_however_often_it_is_clicked(served):
    summary, listed = command(served, "2026-03-08", "day", count=2)
    assert summary["response_type"] == "ephemeral" and share_id(summary) is None
    shared = share_id(listed)
    assert shared

    # Clicked twice at once (or delivered twice by Slack), by the same person: one post.
    click = button_click(SHARE_ACTION, shared, served.slack.response_url("share"))
    sends = [threading.Thread(target=served.send, args=click) for _ in range(2)]
    for send in sends:
        send.start()
    for send in sends:
        send.join()
    served.slack.wait_for(lambda s: len(public(s, "share")) >= 2)
    first, second = public(served.slack, "share")
    assert shown(first).startswith("*Acme: merged PRs for 2026-03-08 (PST)*") and shown(second) == shown(listed)
    assert first["blocks"][0] == {"type": "context", "elements": [{"type": "mrkdwn", "text": "Shared by <@U0ALICE>", "verbatim": True}]}
    assert first["replace_original"] is False and share_id(second) is None  # the shared copy has no share button

    # Someone else clicks it later: told who shared it, nothing posted again.
    served.send(*button_click(SHARE_ACTION, shared, served.slack.response_url("bob"), user="U0BOB"))
    served.slack.wait_for(lambda s: s.responses("bob"))
    [told] = [call.params for call in served.slack.responses("bob")]
    assert told["response_type"] == "ephemeral" and told["text"] == "<@U0ALICE> already shared this reply in the channel."
    time.sleep(QUIET)
    assert len(public(served.slack, "share")) == 2 and len(served.slack.responses("share")) == 2


def test_public_and_error_replies_have_no_share_button(served):
    [subscribed] = command(served, "subscribe rocm", "sub")
    [wrong] = command(served, "area gardening", "bad")
    assert subscribed["response_type"] == "in_channel" and share_id(subscribed) is None
    assert share_id(wrong) is None


def test_replies_about_ones_own_subscriptions_have_no_share_button(served):
    """`/prdigest me …` answers only the person (their GitHub login, their direct messages): nothing to share."""
    linked, subscribed, listed = (
        command(served, text, hook)[0]
        for text, hook in (("me github ada-l", "link"), ("me subscribe my-prs", "mine"), ("me", "list"))
    )
    assert "ada-l" in shown(linked) and "each PR of yours" in shown(subscribed) and "ada-l" in shown(listed)
    assert all(reply["response_type"] == "ephemeral" and share_id(reply) is None for reply in (linked, subscribed, listed))


def test_a_shared_answer_keeps_its_vote_buttons(served):
    [answer] = command(served, "ask what changed for ROCm on 2026-03-08?", "ask")
    buttons = {element["action_id"] for block in answer["blocks"] if block["type"] == "actions" for element in block["elements"]}
    assert {SHARE_ACTION, VOTE_UP_ACTION} <= buttons
    served.send(*button_click(SHARE_ACTION, share_id(answer), served.slack.response_url("share")))
    served.slack.wait_for(lambda s: public(s, "share"))
    [posted] = public(served.slack, "share")
    assert "#4102" in shown(posted) and share_id(posted) is None
    assert any(e["action_id"] == VOTE_UP_ACTION for b in posted["blocks"] if b["type"] == "actions" for e in b["elements"])


def test_a_share_slack_refused_can_be_tried_again(served):
    reply = command(served, "area rocm 2026-03-08", "area", count=2)[-1]
    served.slack.fail("response_url:share", Fault(404, error="expired_url"))
    served.send(*button_click(SHARE_ACTION, share_id(reply), served.slack.response_url("share")))
    served.slack.wait_for(lambda s: len(s.responses("share")) >= 2)
    refused, apology = served.slack.responses("share")
    assert not refused.ok and apology.params["response_type"] == "ephemeral" and "try the button again" in apology.params["text"]
    served.send(*button_click(SHARE_ACTION, share_id(reply), served.slack.response_url("again")))
    served.slack.wait_for(lambda s: public(s, "again"))
    assert "rocm" in shown(public(served.slack, "again")[0])


def test_an_old_or_unknown_reply_cannot_be_shared(served):
    reply = command(served, "area rocm 2026-03-08", "area", count=2)[-1]
    with served.runtime.db.conn:
        served.runtime.db.execute("update shared_replies set created_at = created_at - 2 * 86400")
    for value, hook in ((share_id(reply), "old"), ("abcdefghijklmnop", "unknown")):
        served.send(*button_click(SHARE_ACTION, value, served.slack.response_url(hook)))
        served.slack.wait_for(lambda s, hook=hook: s.responses(hook))
        assert "no longer kept" in served.slack.responses(hook)[0].params["text"]


def test_a_malformed_share_click_gets_one_line(served, caplog):
    for value in ("../../etc", "x" * 200):
        assert served.send(*button_click(SHARE_ACTION, value, served.slack.response_url("bad"))).status_code == 200
    payload = click_payload(SHARE_ACTION, "abcdefghijklmnop", served.slack.response_url("bad"))
    del payload["response_url"]
    assert served.send(*interactive(payload)).status_code == 200
    lines = lambda: [r for r in caplog.records if r.name == "bot.slack.sharing"]
    wait_until(lambda: len(lines()) >= 3, "a line for each click")
    assert len(lines()) == 3 and not any(r.exc_info for r in lines()) and not served.slack.responses("bad")

"""👍/👎 on answers: buttons on every answer, votes kept, the 👎 modal, `stats`, and evaluation lines eval reads."""
import json
import logging
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from conftest import LA
from freezegun import freeze_time
from servers.slack_api import button_click, interactive, mention_event, slash_command, submission_payload
from slack_helpers import REPO, WORKSPACE, Served, shown
from waiting import wait_until

from bot.messages.interactive import VOTE_DOWN_ACTION, VOTE_UP_ACTION
from store.tables.feedback import record_answer, record_vote

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "what changed for ROCm on 2026-03-08?"


def votes(served: Served) -> list[dict]:
    return [dict(row) for row in served.runtime.db.query("select * from answer_votes order by answer_id, user")]


def buttons(params: dict) -> dict[str, str]:
    """The action ids and values of a message's buttons."""
    return {element["action_id"]: element["value"] for block in params["blocks"] if block["type"] == "actions"
            for element in block["elements"]}


def mention_answer(served: Served, ts: str = "1750000000.000100") -> str:
    """Ask by mention; the id its vote buttons carry."""
    served.send(*mention_event(f"<@UPRDIGEST> {QUESTION}", ts=ts))
    served.slack.wait_for(lambda s: s.calls_to("chat.update"))
    update = served.slack.calls_to("chat.update")[-1].params
    assert "#4102" in shown(update)
    answer_id = buttons(update)[VOTE_UP_ACTION]
    assert buttons(update)[VOTE_DOWN_ACTION] == answer_id
    return answer_id


def click(served: Served, action: str, answer_id: str, hook: str, user: str = "U0ALICE") -> None:
    assert served.send(*button_click(action, answer_id, served.slack.response_url(hook), user=user)).status_code == 200


def modal(served: Served, count: int = 1) -> dict:
    served.slack.wait_for(lambda s: len(s.calls_to("views.open")) >= count)
    return served.slack.calls_to("views.open")[count - 1].params["view"]


def submit(served: Served, view: dict, wrong: str | None = None, cite: str | None = None, user: str = "U0ALICE") -> dict:
    response = served.send(*interactive(submission_payload(view, {"wrong": wrong, "should_cite": cite}, user=user)))
    assert response.status_code == 200
    return response.json() if response.content else {}


def test_a_mention_answer_takes_votes_and_a_second_click_changes_them(served):
    answer_id = mention_answer(served)
    click(served, VOTE_UP_ACTION, answer_id, "up")
    served.slack.wait_for(lambda s: s.responses("up"))
    thanks = served.slack.responses("up")[0].params
    assert thanks["response_type"] == "ephemeral" and "noted as helpful" in thanks["text"]
    click(served, VOTE_UP_ACTION, answer_id, "up-again")  # a double click
    served.slack.wait_for(lambda s: s.responses("up-again"))
    click(served, VOTE_UP_ACTION, answer_id, "bob", user="U0BOB")
    served.slack.wait_for(lambda s: s.responses("bob"))
    assert [(v["user"], v["vote"]) for v in votes(served)] == [("U0ALICE", "up"), ("U0BOB", "up")]

    click(served, VOTE_DOWN_ACTION, answer_id, "down")  # Alice changes her mind
    view = modal(served)
    assert view["callback_id"] == "prdigest_feedback" and json.loads(view["private_metadata"]) == {"answer": int(answer_id)}
    assert [(v["user"], v["vote"]) for v in votes(served)] == [("U0ALICE", "down"), ("U0BOB", "up")]
    answered = served.runtime.db.execute("select question, first_line, citations, channel, asked_by, kind from answers").fetchone()
    assert answered[0] == QUESTION and answered[1] and "acme/engine#4102" in json.loads(answered[2])
    assert answered[3:] == ("C0REPORTS", "U0ALICE", "mention")


def test_the_modal_keeps_what_was_wrong_and_the_prs_it_should_have_cited(served):
    answer_id = mention_answer(served)
    click(served, VOTE_DOWN_ACTION, answer_id, "down")
    view = modal(served)
    assert QUESTION in view["blocks"][0]["text"]["text"]
    ack = submit(served, view, wrong="Missed the <!channel> MI300 fix (log: key sk-live1234567890abcdef) " + "x" * 3000,
                 cite=f"#4090, https://github.com/{REPO}/pull/4085 {REPO}#4099")
    assert ack["response_action"] == "update" and "Thanks" in ack["view"]["blocks"][0]["text"]["text"]
    [vote] = votes(served)
    assert vote["vote"] == "down" and vote["comment"].startswith("Missed the <!channel> MI300 fix (log: key sk-***)")
    assert len(vote["comment"]) == 2000
    assert json.loads(vote["expected"]) == [f"{REPO}#4090", f"{REPO}#4085", f"{REPO}#4099"]
    # A second 👎 click opens the modal again and keeps what was said, unless something new is submitted.
    click(served, VOTE_DOWN_ACTION, answer_id, "down-again")
    modal(served, 2)
    [vote] = votes(served)
    assert json.loads(vote["expected"]) == [f"{REPO}#4090", f"{REPO}#4085", f"{REPO}#4099"] and vote["comment"].startswith("Missed")


@pytest.mark.parametrize(
    ("cite", "error"),
    [
        ("the rocm one", "\u201cthe\u201d is not a PR number or link"),
        ("#4090 https://github.com/other/repo/pull/3", "other/repo is not a repository prdigest follows"),
        ("https://example.com/x", "is not a PR number or link"),
    ],
)
def test_prs_that_cannot_be_read_get_an_error_in_the_modal(served, cite, error):
    answer_id = mention_answer(served)
    click(served, VOTE_DOWN_ACTION, answer_id, "down")
    ack = submit(served, modal(served), wrong="wrong", cite=cite)
    assert ack["response_action"] == "errors" and list(ack["errors"]) == ["should_cite"]
    assert error in ack["errors"]["should_cite"] and "give PR numbers like #4102" in ack["errors"]["should_cite"]
    assert votes(served)[0]["comment"] is None  # nothing kept until the modal is right


def test_a_modal_submitted_after_the_answer_was_deleted(served, caplog):
    answer_id = mention_answer(served)
    click(served, VOTE_DOWN_ACTION, answer_id, "down")
    view = modal(served)
    served.slack.delete("C0REPORTS", served.slack.calls_to("chat.update")[-1].params["ts"])  # deleted in Slack
    ack = submit(served, view, wrong="It listed the wrong day", cite="4090")
    assert "Thanks" in ack["view"]["blocks"][0]["text"]["text"]
    assert votes(served)[0]["comment"] == "It listed the wrong day"

    # Gone from the store too (restored from an older backup, say): the modal says so, in one log line.
    with served.runtime.db.conn:
        served.runtime.db.execute("delete from answer_votes")
        served.runtime.db.execute("delete from answers")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="bot"):
        ack = submit(served, view, wrong="again")
    assert ack["response_action"] == "update" and "no longer kept" in ack["view"]["blocks"][0]["text"]["text"]
    lines = [record for record in caplog.records if record.name.startswith("bot")]
    assert len(lines) == 1 and not lines[0].exc_info and votes(served) == []


def test_malformed_votes_and_submissions_get_one_line_each(served, caplog):
    bad = [
        button_click(VOTE_UP_ACTION, "not-a-number", served.slack.response_url("bad")),
        button_click(VOTE_DOWN_ACTION, "9" * 40, served.slack.response_url("bad")),
        interactive({"type": "view_submission", "user": {"id": "U1"}, "trigger_id": "1",
                     "view": {"callback_id": "prdigest_feedback", "private_metadata": "{", "state": {"values": {}}}}),
        interactive({"type": "view_submission", "user": {"id": "U1"}, "trigger_id": "1",
                     "view": {"callback_id": "prdigest_feedback", "private_metadata": '{"answer": 1}', "state": []}}),
    ]
    with caplog.at_level(logging.WARNING, logger="bot"):
        for body, kind in bad:
            assert served.send(body, kind).status_code < 500
        lines = lambda: [r for r in caplog.records if r.name.startswith("bot")]
        wait_until(lambda: len(lines()) >= len(bad), "a line for each")
    assert len(lines()) == len(bad) and not any(r.exc_info for r in lines())
    # Each line says what was wrong with it (two reached the listeners; bolt could not read the others).
    said = [r.getMessage() for r in lines()]
    assert sum("nothing recorded" in line for line in said) >= 2 and all("nothing recorded" in line or "refused" in line for line in said)
    assert not served.slack.calls_to("response_url") and not served.slack.calls_to("views.open")


def test_an_ask_answer_carries_votes_and_other_replies_do_not(served):
    served.send(*slash_command(f"ask {QUESTION}", served.slack.response_url("ask")))
    served.send(*slash_command("2026-03-08", served.slack.response_url("day")))
    served.slack.wait_for(lambda s: s.responses("ask") and len(s.responses("day")) >= 2)
    answer_id = buttons(served.slack.responses("ask")[0].params)[VOTE_UP_ACTION]
    assert not any(VOTE_UP_ACTION in buttons(call.params) for call in served.slack.responses("day"))
    click(served, VOTE_DOWN_ACTION, answer_id, "down")
    modal(served)
    assert served.runtime.db.execute("select kind from answers").fetchone()[0] == "ask"


def _vote(db, question: str, vote: str, when: datetime, user: str = "U1", citations=(f"{REPO}#4102",), details=None):
    answer_id = record_answer(db, WORKSPACE, "mention", question, "First line.", citations, "C0REPORTS", "U0ASKER", when)
    record_vote(db, WORKSPACE, answer_id, user, vote, when, details)
    return answer_id


@freeze_time("2026-03-18 12:00:00")
def test_stats_show_votes_per_week_and_the_share_up(db, run_cli):
    _vote(db, "a", "up", datetime(2026, 3, 2, 10, tzinfo=LA))  # Monday
    _vote(db, "b", "down", datetime(2026, 3, 8, 23, 30, tzinfo=LA))  # the Sunday of the same week
    _vote(db, "c", "up", datetime(2026, 3, 16, 9, tzinfo=LA))
    _vote(db, "c", "up", datetime(2026, 3, 17, 9, tzinfo=LA), user="U2")
    _vote(db, "old", "down", datetime(2025, 1, 6, 9, tzinfo=LA))  # long before the weeks shown
    text = run_cli("stats").out
    assert "Feedback on answers per week (America/Los_Angeles, weeks from Monday):" in text
    assert "  2026-03-02                 1         1       50%" in text
    assert "  2026-03-16                 2         0      100%" in text
    assert "2026-03-09" not in text  # a week without votes
    assert "  since 2026-01-26           3         1       75%" in text
    figures = json.loads(run_cli("stats", "--json", "--weeks", "2").out)["votes"]
    assert figures == [{"week": "2026-03-16", "up": 2, "down": 0, "share_up": 1.0}]
    with db.conn:
        db.execute("delete from answer_votes")
    assert "Feedback on answers: no votes since 2026-01-26." in run_cli("stats").out


def test_export_writes_the_down_votes_as_evaluation_lines(db, run_cli):
    when = datetime(2026, 3, 9, 10, tzinfo=LA)
    named = _vote(db, "what fixed rocm attention?", "down", when, details=("wrong PR", [f"{REPO}#4102"]))
    record_vote(db, WORKSPACE, named, "U2", "down", when, ("also missed", [f"{REPO}#4090", f"{REPO}#4102"]))
    _vote(db, "who wrote the <!channel> docs fix?", "down", datetime(2026, 3, 10, 9, tzinfo=LA), citations=())
    _vote(db, "liked", "up", when)
    _vote(db, "before", "down", datetime(2026, 3, 1, 9, tzinfo=LA))
    result = run_cli("feedback", "export", "--since", "2026-03-09", "--format", "jsonl")
    assert result.code == 0, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert lines == [
        {"q": "what fixed rocm attention?", "cited": [4102], "expected": [4102, 4090], "comment": "wrong PR / also missed",
         "repo": REPO, "now": "2026-03-09T10:00:00-07:00", "first_line": "First line."},
        {"q": "who wrote the <!channel> docs fix?", "cited": [], "expected": None, "comment": "",
         "repo": "vllm-project/vllm", "now": "2026-03-10T09:00:00-07:00", "first_line": "First line."},
    ]
    assert run_cli("feedback", "export", "--format", "csv").code == 2


def test_eval_reads_the_exported_lines(runtime, run_cli, tmp_path):
    """The lines a team exported, scored by bench/eval.py against its own store."""
    from slack_helpers import import_fixtures

    import_fixtures(runtime.db)
    asked = datetime(2026, 3, 9, 10, tzinfo=LA)
    _vote(runtime.db, "what changed for ROCm on 2026-03-08?", "down", asked, details=("", [f"{REPO}#4102"]))
    _vote(runtime.db, "what merged on 2026-03-07?", "down", asked, citations=(f"{REPO}#4085",))
    _vote(runtime.db, "what merged on 2026-03-08?", "down", asked, citations=(f"{REPO}#1",))
    exported = tmp_path / "feedback.jsonl"
    exported.write_text(run_cli("feedback", "export", "--format", "jsonl").out)
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "eval.py"), "--questions", str(exported),
                           "--db", str(runtime.settings.db_path), "--misses"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "3 answers marked wrong" in done.stdout
    feedback_row = next(line for line in done.stdout.splitlines() if line.startswith("feedback"))
    assert feedback_row.split()[1:3] == ["1", "1.000"]  # one line with PRs named: found, and cited
    # Of the two with none named, the one still citing what was marked wrong is listed; the other changed.
    assert "marked wrong without the PRs to cite: 2; still citing exactly the same: 1" in done.stdout
    assert "'what merged on 2026-03-07?': cites [4085] again" in done.stdout

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"q": "x"}\n')
    refused = subprocess.run([sys.executable, str(ROOT / "bench" / "eval.py"), "--questions", str(bad),
                              "--db", str(runtime.settings.db_path)], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert refused.returncode == 1 and "bad.jsonl:1: not an evaluation line" in refused.stderr

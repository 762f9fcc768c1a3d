"""Reading model replies: every shape real models use, and what is refused (no server needed)."""
from __future__ import annotations

import pytest
from servers.openai_api import REPLY_SHAPES, summary_sections

from bot.model.reply import parse_reply
from store.report.markdown import SECTIONS

LABELS = ["What changed and why", "Technical impact", "Potential risks", "Key insights"]


def reply_with(headings, kind="TYPE: substantial", bodies=("A.", "B.", "C.", "D.")) -> str:
    return "\n".join([kind] + [f"{h}\n{b}" for h, b in zip(headings, bodies)])


@pytest.mark.parametrize(
    "text",
    [
        reply_with([f"## {label}" for label in LABELS]),
        reply_with([f"**{label}**" for label in LABELS]),
        reply_with([f"{label}:" for label in LABELS]),
        "<think>The user wants a summary.</think>\n```markdown\n" + reply_with([f"### {label}" for label in LABELS]) + "\n```",
        reply_with([f"## {label}" for label in LABELS], kind="") + "\n**Type:** `SUBSTANTIAL`",
        reply_with([f"## {label}" for label in [LABELS[1], LABELS[0], *LABELS[2:]]], bodies=("B.", "A.", "C.", "D.")),
        reply_with([f"- **{label.upper()}**:" for label in LABELS], kind="## Type\n**Substantial**"),
        reply_with([f"> ### {label.replace('and', '&')}" for label in LABELS], kind="Type: substantial (a new code path)"),
        reply_with(["## What changed", "## Impact", "## Risks", "## Insights"]),
        '{"summary": {"Type": "SUBSTANTIAL", "What changed and why": "A.", "technical_impact": ["B."],'
        ' "Potential Risks": "C.", "key-insights": "D."}}',
    ],
    ids=["hashes", "bold", "colon", "thinking-and-fence", "type-last", "any-order", "bulleted-bold-type-heading",
         "quoted-ampersand-type-explained", "short-names", "nested-json-any-key-style"],
)
def test_replies_in_the_usual_shapes_parse(text):
    parsed = parse_reply(text)
    assert parsed.type == "substantial"
    assert list(parsed.sections.values()) == ["A.", "B.", "C.", "D."]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Here you go!", "expected one TYPE line, substantial or trivial (found none)"),
        ("TYPE: trivial\nHere you go!", "missing section(s): What changed and why, Technical impact"),
        ("<think>All of it is reasoning.</think>", "nothing but reasoning"),
        (reply_with([f"## {label}" for label in LABELS]) + "\nType: trivial", "found substantial, trivial"),
        (reply_with([f"## {label}" for label in LABELS], kind=""), "expected one TYPE line"),
        (reply_with([f"## {label}" for label in LABELS], kind="TYPE: major"), "found major"),
        (reply_with([f"## {label}" for label in LABELS[:3]]), "missing section(s): Key insights"),
        (reply_with([f"## {label}" for label in LABELS], bodies=("A.", "", "C.", "D.")), "'Technical impact' is empty"),
        (reply_with([f"## {label}" for label in LABELS], bodies=("A.", "B.", "C.", "D" * 3000)), "'Key insights' is 3000 characters"),
        (reply_with([f"## {label}" for label in LABELS + [LABELS[0]]], bodies="ABCDE"), "appears twice"),
    ],
)
def test_anything_else_is_refused_with_a_reason(text, problem):
    with pytest.raises(ValueError) as caught:
        parse_reply(text)
    assert problem in str(caught.value) and "\n" not in str(caught.value)


def test_sections_are_stored_as_one_paragraph():
    text = reply_with([f"## {label}" for label in LABELS], bodies=("It does:\n- one thing\n- another\n\n## Aside\n---\nDone.", "B.", "C.", "D."))
    assert parse_reply(text).sections["what_changed"] == "It does: one thing another Aside Done."


@pytest.mark.parametrize(
    "text",
    ["<think>" * 2800, "## What changed and why\n" + " " * 19000 + "x", "TYPE" + ":" * 19000 + "x",
     ("**" + " " * 70 + "\n") * 250, "x" * 25000],
    ids=["open-thinking", "spaces", "colons", "bold-markers", "too-long"],
)
def test_crafted_replies_are_refused_without_stalling(text, hang_guard):
    with pytest.raises(ValueError):
        parse_reply(text)


@pytest.mark.parametrize("shape", REPLY_SHAPES)
def test_every_shape_gives_the_four_sections_and_nothing_else(shape):
    reply = REPLY_SHAPES[shape](summary_sections("42"), "trivial")
    parsed = parse_reply(reply.text)  # reasoning beside the content never reaches the parser
    assert parsed.type == "trivial"
    assert parsed.sections == summary_sections("42")
    assert list(parsed.sections) == [key for key, _ in SECTIONS]


@pytest.mark.parametrize(
    ("closing", "insights"),
    [
        ("\n\nLet me know if you need more detail.", "D."),
        ("\nI hope this helps!", "D."),
        ("\n\n---\nNote: generated from a partial diff.", "D."),
        ("\nThe rollout needs a flag flip.", "D. The rollout needs a flag flip."),
    ],
    ids=["sign-off", "hope", "rule-and-note", "a-second-sentence-stays"],
)
def test_closing_remarks_are_not_kept(closing, insights):
    text = reply_with([f"## {label}" for label in LABELS]) + closing
    assert parse_reply(text).sections["insights"] == insights


def test_words_that_look_like_markers_inside_sections_stay_text():
    bodies = ("Type hints are stricter now.", "Impact on latency is small.", "Risks are low.", "A `</think>` tag is parsed.")
    parsed = parse_reply(reply_with([f"## {label}" for label in LABELS], bodies=bodies))
    assert list(parsed.sections.values()) == list(bodies)

"""The terminal renderer: our mrkdwn as plain or styled text, with nothing untrusted able to drive the terminal."""
import io

import pytest

from bot.terminal.render import PLAIN, Style, neutralize, render

FULL = Style(emphasis=True, hyperlinks=True)
URL = "https://github.com/acme/engine/pull/35050"
HEADLINE = f"*<{URL}|#35050 Handle &lt;login&gt; &amp; more>*"


def test_plain_text_has_no_markup_and_shows_every_url():
    assert render(HEADLINE) == f"#35050 Handle <login> & more <{URL}>"
    line = f"\u2022 <{URL}|#35050 Fix x_y_z>  _(by ada-l · 08:00 · core)_"
    assert render(line) == f"\u2022 #35050 Fix x_y_z <{URL}>  (by ada-l · 08:00 · core)"
    assert render(f"<{URL}>") == URL  # a bare link is its URL once


def test_styled_text_is_ansi_bold_and_italic_with_osc8_links():
    link = f"\x1b]8;;{URL}\x1b\\#35050 Handle <login> & more\x1b]8;;\x1b\\ <{URL}>"
    assert render(HEADLINE, FULL) == f"\x1b[1m{link}\x1b[22m"
    assert render("_when_ is a day", FULL) == "\x1b[3mwhen\x1b[23m is a day"
    assert render(f"<{URL}|#35050>", Style(hyperlinks=False)) == f"#35050 <{URL}>"


def test_only_slack_emphasis_is_markup():
    text = "snake_case and 2*3*4 stay; *bold*, _italic_ go"
    assert render(text) == "snake_case and 2*3*4 stay; bold, italic go"
    # code keeps its backticks, and what is inside is never emphasis
    assert render("`/prdigest *area* NAME` and `&lt;x&gt;`", FULL) == "`/prdigest *area* NAME` and `<x>`"


def test_entities_are_unescaped_once():
    assert render("&amp;lt;b&amp;gt; is markup, &lt;b&gt; is a tag") == "&lt;b&gt; is markup, <b> is a tag"


def test_a_user_mention_is_an_at_name():
    assert render("(set by <@U0ALICE>)") == "(set by @U0ALICE)"


EVIL = [
    "\x1b]8;;http://evil\x07click me\x1b]8;;\x07",  # an OSC 8 link of its own
    "\x1b[2J\x1b[H",  # clear the screen
    "\x9b2J",  # the same with the one-byte C1 CSI
    "safe\rEVIL\x08\x08",  # overwrite what was printed
    "\x1b]0;title\x1b\\",  # set the window title
    "\u202eevil\u202c",  # bidi override: shown in another order than it reads
]


@pytest.mark.parametrize("text", EVIL)
@pytest.mark.parametrize("style", [PLAIN, FULL], ids=["plain", "styled"])
def test_untrusted_text_cannot_reach_the_terminal_raw(text, style):
    shown = render(f"\u2022 <{URL}|#1 {text}>  _{text}_ `{text}` {text}", style)
    ours = shown.replace("\x1b[3m", "").replace("\x1b[23m", "").replace(f"\x1b]8;;{URL}\x1b\\", "")
    ours = ours.replace("\x1b]8;;\x1b\\", "")
    assert not any(ch in ours for ch in "\x1b\x07\x9b\r\x08\u202e"), repr(shown)


def test_neutralize_keeps_text_lines_and_tabs():
    assert neutralize("a\tb\nc\x00d\x7fe\x85f") == "a\tb\ncdef"


class FakeStream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    "tty, env, expected",
    [
        (True, {"TERM": "xterm-256color"}, FULL),
        (True, {"TERM": "xterm", "NO_COLOR": "1"}, Style(emphasis=False, hyperlinks=True)),
        (True, {"TERM": "xterm", "NO_COLOR": ""}, FULL),  # empty means unset (no-color.org)
        (True, {"TERM": "dumb"}, PLAIN),
        (True, {}, PLAIN),
        (False, {"TERM": "xterm-256color"}, PLAIN),
    ],
    ids=["tty", "no-color", "empty-no-color", "dumb", "no-term", "pipe"],
)
def test_style_follows_the_stream_term_and_no_color(tty, env, expected):
    assert Style.for_stream(FakeStream(tty), env) == expected

"""Subscription filters: the grammar, globs, the rule (ORed within a kind, ANDed across, leaving out wins),
and what `post-daily --dry-run` lists for a subscribed channel on a report of our own with bots, labels and paths."""
from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

import pytest
from conftest import FIXTURES, LA
from pr_factory import make_pr
from servers.github_api import FakePull
from slack_helpers import REPO

from bot.answers.commands import execute
from bot.messages.blocks import live_message
from bot.slack.daily import report_messages
from store.report.day import load_report
from store.sources.importer import import_file
from store.subscription.filter import FilterError, load_filter, parse_filter, split_terms
from store.subscription.globs import Glob
from store.tables.prs import get_prs
from store.tables.subscriptions import channel_subscriptions
from store.tables.teams import NO_TEAM

DAY = "2026-03-12"  # tests/fixtures/report-2026-03-12.md
REPORT = FIXTURES / f"report-{DAY}.md"


def rule(text: str):
    return parse_filter(split_terms(text), REPO)


# ---------------------------------------------------------------- globs

@pytest.mark.parametrize("glob, path, matches", [
    ("docs/**", "docs/index.md", True),
    ("docs/**", "docs/design/scheduler.md", True),
    ("docs/**", "engine/docs/x.md", False),  # anchored at the repository's root
    ("docs", "docs/design/scheduler.md", True),  # a folder matches what is inside it
    ("docs/", "docs/index.md", True),
    ("./docs/*.md", "docs/index.md", True),
    ("docs/*.md", "docs/design/scheduler.md", False),  # * stays within one level
    ("**/*.md", "README.md", True),  # ** is any number of levels, none included
    ("**/*.md", "docs/design/scheduler.md", True),
    ("**/*.md", "docs/design/scheduler.py", False),
    ("*.md", "README.md", True),
    ("*.md", "docs/index.md", False),
    ("engine/**/test_*.py", "engine/test_a.py", True),
    ("engine/**/test_*.py", "engine/v1/sample/test_topk.py", True),
    ("engine/**/test_*.py", "tests/v1/sample/test_topk.py", False),
    ("engine/v?/sample", "engine/v1/sample/topk.py", True),
    ("engine/v?/sample", "engine/v12/sample/topk.py", False),
    ("csrc/**", "csrc", True),
    ("**", "anything/at/all.txt", True),
    ("engine**.py", "engine_x.py", True),  # ** inside a level is *
    ("engine**.py", "engine/x.py", False),
    ("Docs/**", "docs/index.md", False),  # paths compare with case, as git does
])
def test_globs(glob, path, matches):
    assert rule(f"path:{glob}").terms[0].glob.matches(path) is matches, (glob, path)


def test_a_glob_full_of_stars_takes_no_time_on_a_long_path(hang_guard):
    star_run = "*a" * 90 + "*b"
    assert not Glob(star_run).matches("a" * 3000)
    assert not Glob("**/" * 60 + "x").matches("/".join(["d"] * 500))


# ---------------------------------------------------------------- the grammar

def test_every_term_prints_back_in_canonical_order_and_reads_back_the_same():
    typed = ('substantial -PATH:**/*.md -bots Label:"Needs Rebase" author:@ada-l -author:Dependabot[bot] '
             'path:./docs/ nvidia -docs rocm label:ready')
    first = rule(typed)
    assert first.text == (
        'rocm nvidia -docs author:ada-l -author:Dependabot[bot] label:"Needs Rebase" label:ready path:docs '
        "-path:**/*.md -bots substantial"
    )
    assert rule(first.text) == first == load_filter(first.text)
    assert rule("rocm ROCM amd author:Ada-L author:ada-l").text == "rocm author:Ada-L"  # aliases, case
    assert rule("label:“needs rebase”").text == 'label:"needs rebase"'  # typographic quotes, as chat clients type


@pytest.mark.parametrize("typed, says", [
    ("rcom", "`rcom` is not a filter term: did you mean `rocm`?"),
    ("-nvdia", "`-nvdia` is not a filter term: did you mean `-nvidia`?"),
    ("bots", "`bots` is not a filter term: did you mean `-bots`?"),
    ("substantail", "`substantail` is not a filter term: did you mean `substantial`?"),
    ("auther:ada", "`auther:ada` is not a filter term: did you mean `author:ada`?"),
    ("lable:ready", "`lable:ready` is not a filter term: did you mean `label:ready`?"),
    ("weekyl", "`weekyl` is not a filter term: did you mean `weekly`?"),
    ("gardening", "`gardening` is not a filter term or an area: terms are AREA, author:LOGIN"),
    ("rocm -rocm", "`rocm` is both asked for and left out"),
    ("author:", "`author:` names no author"),
    ("author:not/a/login", "`not/a/login` is not a GitHub login"),
    ("path:`x`", "`path:` takes at most 200 characters, without quotes, backslashes or backticks"),
    ('label:"needs rebase', "a quote is not closed"),
])
def test_what_is_not_a_term_gets_one_line_naming_it(typed, says):
    with pytest.raises(FilterError) as caught:
        parse_filter(split_terms(typed), REPO, known=("weekly",))
    assert str(caught.value).startswith(says) and "\n" not in str(caught.value)


# ---------------------------------------------------------------- the rule

PRS = [
    make_pr(1, author="ada-l", areas=["rocm"], labels=["ready"], files=["csrc/rocm/a.cu"]),
    make_pr(2, author="ada-l", areas=["nvidia"], files=["docs/a.md", "README.md"], type="trivial"),
    make_pr(3, author="grace-h", areas=["rocm", "docs"], files=["docs/rocm.md", "engine/x.py"]),
    make_pr(4, author="renovate[bot]", areas=["ci"], files=[".github/x.yml"], type="trivial"),
    make_pr(5, author="acme-bot", areas=["core"], labels=["Ready"], files=["engine/y.py"]),
    make_pr(6, author="linus-t", areas=["core"], files=["README.md"], changed_files=400, type="trivial"),
]


@pytest.mark.parametrize("text, kept", [
    ("", [1, 2, 3, 4, 5, 6]),
    ("rocm nvidia", [1, 2, 3]),  # one kind: ORed
    ("rocm author:grace-h", [3]),  # two kinds: ANDed
    ("rocm nvidia author:ada-l author:grace-h -docs", [1, 2]),  # leaving out wins
    ("-bots", [1, 2, 3, 6]),  # renovate[bot], and acme-bot as the operator lists it
    ("label:ready", [1, 5]),  # labels compare without case
    ("-label:READY", [2, 3, 4, 6]),
    ("path:docs/**", [2, 3]),  # a PR that changed one file the glob matches
    ("-path:**/*.md", [1, 3, 4, 5, 6]),  # left out: every file it changed matches; 6 lists 1 of 400 files
    ("path:docs/** -path:**/*.md", [3]),
    ("substantial", [1, 3, 5]),
    ("-author:ada-l -core", [3, 4]),
    ("-rocm -nvidia -ci -core", []),
])
def test_the_rule(text, kept):
    assert [pr.number for pr in rule(text).select(PRS, bots={"acme-bot"})] == kept


def test_with_areas_keeps_the_other_terms_and_takes_an_area_out_of_the_left_out():
    changed = rule("rocm -docs -bots path:docs/**").with_areas(["docs", "nvidia"], REPO)
    assert changed.text == "nvidia docs path:docs/** -bots"
    assert rule("rocm -bots").with_areas([], REPO).text == "-bots"


# ---------------------------------------------------------------- a report of our own, subscribed and dry-run

LABELS = {4201: ["rocm", "ready"], 4202: ["dependencies", "ci/build"], 4203: ["documentation"],
          4204: ["ready", "needs rebase"], 4207: ["frontend", "ready"], 4208: ["rocm", "documentation"]}


@pytest.fixture
def store(runtime, github, run_cli, monkeypatch):
    """The day's report imported, then the same PRs ingested from GitHub, which adds their labels."""
    monkeypatch.setenv("PRDIGEST_BOTS", "acme-bot")
    import_file(runtime.db, REPORT, LA, REPO)
    stored = get_prs(runtime.db, REPO, list(range(4201, 4210)))
    github.add(REPO, *(FakePull(pr.number, pr.title, pr.merged_at, author=pr.author, files=pr.files,
                                labels=LABELS.get(pr.number, [])) for pr in stored.values()))
    assert run_cli("ingest", "--since", DAY, "--until", DAY).code == 0
    assert get_prs(runtime.db, REPO, [4204])[4204].labels == ["ready", "needs rebase"]
    return runtime


def listed(run_cli, channel: str) -> list[int]:
    dry = run_cli("post-daily", "--channel", channel, "--date", DAY, "--dry-run")
    assert dry.code == 0, dry.err
    return sorted({int(number) for number in re.findall(r"\|#(\d+) ", dry.out)})


@pytest.mark.parametrize("typed, kept", [
    ("", [4201, 4202, 4203, 4204, 4205, 4206, 4207, 4208, 4209]),
    ("-bots", [4201, 4203, 4204, 4207, 4208, 4209]),
    ("rocm", [4201, 4203, 4208]),
    ("rocm frontend -bots label:ready", [4201, 4207]),
    ('label:"needs rebase"', [4204]),
    ("-label:documentation -bots", [4201, 4204, 4207, 4209]),
    ("path:docs/**", [4203, 4204]),
    ("-path:**/*.md", [4201, 4202, 4204, 4205, 4206, 4207, 4209]),
    ("path:docs/** -path:**/*.md", [4204]),
    ("author:ada-l", [4201, 4207, 4209]),  # Ada-L wrote 4209: logins compare without case
    ("author:grace-h -docs", []),
    ("substantial -author:ada-l", [4204, 4206]),
    ("-path:.github/** -path:.pre-commit-config.yaml -path:**/*.md", [4201, 4204, 4206, 4207, 4209]),
])
def test_the_dry_run_of_a_subscribed_channel_lists_exactly_what_its_rule_keeps(store, run_cli, typed, kept):
    done = execute(store, f"subscribe {typed}", NO_TEAM, channel="C0RULE", user="U0ALICE")
    assert not done.error, done.text
    [line] = execute(store, "subscriptions", NO_TEAM, channel="C0RULE").text.split("\n")
    printed = re.search(r"\(`(.*)`\)", line)
    assert (printed.group(1) if printed else "") == rule(typed).text
    if printed:  # the printed rule pasted back is the same subscription
        again = execute(store, "subscribe " + printed.group(1), NO_TEAM, channel="C0RULE")
        assert again.text.startswith("Updated: this channel gets") and printed.group(0) in again.text
    assert listed(run_cli, "C0RULE") == kept



def test_a_rule_is_escaped_once_where_a_report_or_an_alert_names_it(store):
    assert not execute(store, 'subscribe label:"r&d <x>" -bots', NO_TEAM, channel="C0AMP").error
    [sub] = channel_subscriptions(store.db, NO_TEAM, "C0AMP")
    report = replace(load_report(store.db, REPO, date(2026, 3, 12), LA), prs=[make_pr(1, labels=["R&D <x>"])])
    headline = report_messages(report, sub)[0].blocks[0]["text"]["text"].split("\n")[0]
    assert headline == '*Acme: merged PRs matching `label:"r&amp;d &lt;x&gt;" -bots` for 2026-03-12 (PDT)*'
    alert = live_message([make_pr(1)], sub.filter, LA).text
    assert alert.startswith('*Merged matching `label:"r&amp;d &lt;x&gt;" -bots`*')

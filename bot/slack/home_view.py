"""The App Home as Block Kit: a person's own subscriptions with the controls that change them, what each
channel gets (read only), then each repository's latest report and the help, within Slack's 100 blocks."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from bot.answers.subscribing import describe
from bot.messages.blocks import home_blocks, mrkdwn_section, text_sections
from bot.messages.mrkdwn import escape
from store.report.day import DailyReport
from store.subscription.cadence import CADENCES, DAILY, LIVE, MY_PRS, RELEASES, WEEKDAYS, WEEKLY
from store.tables.subscriptions import Subscription
from store.text.patterns import LazyPattern
from store.understanding.areas import area_names

GITHUB_ACTION = "prdigest_home_github"
ADD_ACTION = "prdigest_home_add"
CADENCE_ACTION = "prdigest_home_cadence"
AREAS_ACTION = "prdigest_home_areas"
REMOVE_ACTION = "prdigest_home_remove"
HOME_ACTIONS = (GITHUB_ACTION, ADD_ACTION, CADENCE_ACTION, AREAS_ACTION, REMOVE_ACTION)
# A subscription's controls sit in a block named ROW|OWNER/NAME|slot, so a change knows which subscription it is.
ROW = "prdigest_sub"
SEP = "|"
CHOICES = {
    DAILY: "Daily report",
    WEEKDAYS: "Weekday report (Monday's covers the weekend)",
    WEEKLY: "Weekly report",
    LIVE: "Live alerts",
    MY_PRS: "My PRs, as each merges",
    RELEASES: "A thread for each new release",
}
# Past this many of a person's subscriptions, the rest are named by `/prdigest me`: the reports need room too.
MAX_ROWS = 30
MAX_CHANNEL_SECTIONS = 4
MAX_VALUE = 150  # Slack's limit on an option's or a button's value
_CHANNEL_ID = LazyPattern(r"^[CG][A-Z0-9]{2,}$")


@dataclass
class Home:
    """What one person's Home tab shows."""

    login: str | None  # their GitHub login, for my-prs
    mine: list[Subscription]
    channels: list[Subscription]  # every channel's subscriptions
    reports: list[DailyReport]  # each repository's latest day with merges
    repos: Sequence[str]  # what a new subscription may follow
    tz: ZoneInfo
    help: str
    notice: str | None = None  # why the last change was not made


def home_view(home: Home) -> dict[str, Any]:
    blocks = [mrkdwn_section(f":warning: {home.notice}")] if home.notice else []
    blocks += _personal(home)
    blocks += [{"type": "divider"}, *_channels(home), {"type": "divider"}]
    return {"type": "home", "blocks": home_blocks(home.reports, home.help, before=blocks)}


def _personal(home: Home) -> list[dict[str, Any]]:
    blocks = [
        mrkdwn_section("*Your subscriptions*, by direct message. Change them here, or with `/prdigest me`."),
        _login_input(home.login),
    ]
    for sub in home.mine[:MAX_ROWS]:
        about = mrkdwn_section(f"{describe(sub, home.tz)}.", accessory=_remove_button(sub))
        blocks.append({**about, "block_id": SEP.join((row_id(sub), "about"))})
        blocks.append(_controls(sub))
    if len(home.mine) > MAX_ROWS:
        blocks.append(mrkdwn_section(f"_\u2026and {len(home.mine) - MAX_ROWS} more: `/prdigest me` lists them all._"))
    if not home.mine:
        blocks.append(mrkdwn_section("_None yet: add one below, for example My PRs to hear when yours merge._"))
    adding = _add_select(home.repos)
    if adding:
        blocks.append({"type": "actions", "block_id": "prdigest_add", "elements": [adding]})
    return blocks


def _channels(home: Home) -> list[dict[str, Any]]:
    lines = [f"\u2022 {_channel(sub.channel)}: {describe(sub, home.tz)}" for sub in home.channels]
    sections = text_sections(["*What channels get*", *(lines or ["_No channel subscribes yet: `/prdigest subscribe` in one._"])])
    if len(sections) > MAX_CHANNEL_SECTIONS:
        sections = sections[: MAX_CHANNEL_SECTIONS - 1] + [mrkdwn_section("_\u2026and more: `/prdigest subscriptions` lists them._")]
    return sections


def _channel(channel: str) -> str:
    return f"<#{channel}>" if _CHANNEL_ID.match(channel) else escape(channel)


def plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text[:75]}


def _option(text: str, value: str) -> dict[str, Any]:
    return {"text": plain(text), "value": value}


def row_id(sub: Subscription) -> str:
    return SEP.join((ROW, sub.repo, sub.slot))


def _login_input(login: str | None) -> dict[str, Any]:
    element: dict[str, Any] = {
        "type": "plain_text_input", "action_id": GITHUB_ACTION, "max_length": 39,
        "placeholder": plain("octocat"), "dispatch_action_config": {"trigger_actions_on": ["on_enter_pressed"]},
    }
    if login:
        element["initial_value"] = login
    return {"type": "input", "block_id": "prdigest_github", "dispatch_action": True, "optional": True,
            "label": plain("Your GitHub login (for My PRs): type it and press Enter"), "element": element}


def _remove_button(sub: Subscription) -> dict[str, Any]:
    return {
        "type": "button", "action_id": REMOVE_ACTION, "text": plain("Remove"), "style": "danger",
        "value": SEP.join((sub.repo, sub.slot))[:MAX_VALUE],
        "confirm": {"title": plain("Remove it?"), "text": plain(f"Stop this {CHOICES[sub.cadence.name].lower()}?"),
                    "confirm": plain("Remove"), "deny": plain("Keep it")},
    }


def _controls(sub: Subscription) -> dict[str, Any]:
    """A select of the cadence and a multiple select of the areas it keeps (none chosen: every area)."""
    cadences = [_option(CHOICES[name], name) for name in CADENCES]
    cadence: dict[str, Any] = {
        "type": "static_select", "action_id": CADENCE_ACTION, "placeholder": plain("Cadence"), "options": cadences,
        "initial_option": cadences[CADENCES.index(sub.cadence.name)],
    }
    names = area_names(sub.repo)[:100]
    areas: dict[str, Any] = {
        "type": "multi_static_select", "action_id": AREAS_ACTION, "placeholder": plain("Every area"),
        "options": [_option(name, name) for name in names],
    }
    chosen = [_option(name, name) for name in sub.filter.areas if name in names]
    if chosen:
        areas["initial_options"] = chosen
    return {"type": "actions", "block_id": row_id(sub), "elements": [cadence, areas]}


def _add_select(repos: Sequence[str]) -> dict[str, Any] | None:
    """A select that adds a subscription: each cadence, of each repository (grouped by repository when several)."""
    groups = [
        (repo, [_option(CHOICES[name], SEP.join((repo, name))) for name in CADENCES])
        for repo in repos[:20] if len(SEP.join((repo, MY_PRS))) <= MAX_VALUE
    ]
    if not groups:
        return None
    select: dict[str, Any] = {"type": "static_select", "action_id": ADD_ACTION, "placeholder": plain("Add a subscription\u2026")}
    if len(groups) == 1:
        select["options"] = groups[0][1]
    else:
        select["option_groups"] = [{"label": plain(repo), "options": options} for repo, options in groups]
    return select

"""The `prdigest` command line."""
from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import click
from sqlite_utils import Database

from bot.answers.empty_store import empty_store_notice
from bot.config import ConfigError, Settings, parse_repos
from bot.terminal.logs import error_line, log_to_stderr, use_log_format
from bot.terminal.render import Style, render
from store.db import StoreError, StoreMissing, open_db
from store.text.errors import one_line
from store.text.prose import plural, typed
from store.text.safe import neutralize, to_json, use_secrets

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from slack_sdk import WebClient

    from bot.answers.mentions import Replies
    from bot.runtime import Runtime
    from store.tables.prs import Held
    from store.tables.subscriptions import Subscription
    from store.tables.teams import Team


@dataclass
class AppContext:
    """What every command needs: settings, and the store opened on first use."""

    settings: Settings
    creates: bool = True  # a missing store is created (the command fills it), else refused
    _db: Database | None = field(default=None, repr=False)

    @property
    def db(self) -> Database:
        if self._db is None:
            self._db = open_db(self.settings.db_path, self.settings.busy_timeout, create=self.creates)
        return self._db

    def runtime(self) -> Runtime:
        """What the bot's replies need, on this command's store: one a reader lacks is refused here, not in a reply."""
        from bot.runtime import Runtime

        runtime = Runtime(self.settings, create=self.creates)
        _ = runtime.db
        return runtime

    def today(self) -> date:
        return datetime.now(self.settings.timezone).date()

    def team(self, given: str | None) -> Team:
        """The workspace a command acts in: the one --team names, else the store's only one (that of SLACK_BOT_TOKEN,
        or the one installation). A store that knows none yet acts in no workspace, whose rows become those of the
        first workspace to start with a bot token."""
        from store.tables.installations import known_teams
        from store.tables.teams import NO_TEAM

        known = known_teams(self.db)
        listed = ", ".join(map(str, known)) or "none yet"
        if given is not None:
            found = [team for team in known if team.team_id == given]
            if not found:
                raise click.BadParameter(f"no workspace {given} uses this store (it knows {listed})", param_hint="--team")
            return found[0]
        if len(known) > 1:
            raise click.BadParameter(f"this store serves {len(known)} workspaces ({listed}): name one", param_hint="--team")
        return known[0] if known else NO_TEAM

    def repo(self, name: str | None) -> str:
        if name is None:
            return self.settings.default_repo
        try:
            return parse_repos(name, "--repo")[0]
        except ConfigError as exc:
            raise click.BadParameter(str(exc).split(": ", 1)[1], param_hint="--repo") from None

    def day(self, value: str | None, param: str = "--date") -> date | None:
        """The local day an option names, read as commands read days ("2026-02-13", "feb 13", "yesterday")."""
        if value is None:
            return None
        from store.retrieval.reading.when import read_day

        try:
            return read_day(typed(value), self.settings.timezone, datetime.now(self.settings.timezone))
        except ValueError as exc:
            raise click.BadParameter(neutralize(str(exc)), param_hint=param) from None


# A command's callback: pass_app gives it the AppContext, so what click calls takes one argument fewer.
Command = Callable[..., Any]
DB_KEY = "prdigest.db"


def _remember_db(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    # Context.meta is shared by the group and its command: the --db given last wins, before or after the command.
    if value is not None:
        ctx.meta[DB_KEY] = value


db_option = click.option(
    "--db", type=click.Path(dir_okay=False), expose_value=False, callback=_remember_db,
    help="SQLite store (default: $PRDIGEST_DB, else in the user data directory).",
)


def pass_app(*, creates: bool) -> Callable[[Command], Command]:
    """Give the command its AppContext, and take --db after the command's name too.

    Only a command that fills the store (`creates`) makes one that does not exist;
    the others refuse it rather than read an empty store made at a mistyped path."""

    def decorate(command: Command) -> Command:
        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            ctx = click.get_current_context()
            app = ctx.find_object(AppContext)
            assert app is not None, "the group's callback made it"
            app.settings = app.settings.with_db(ctx.meta.get(DB_KEY))
            app.creates = creates
            return command(app, *args, **kwargs)

        return db_option(run)

    return decorate


def use_operator_files(settings: Settings) -> None:
    """The operator's areas (PRDIGEST_AREAS) and vocabulary (PRDIGEST_VOCABULARY), read and checked before any
    command runs."""
    if settings.areas_file is not None:
        from store.understanding.areas import use_areas_file

        try:
            use_areas_file(settings.areas_file)
        except ValueError as exc:
            raise ConfigError(f"PRDIGEST_AREAS: {exc}") from None
    if settings.vocabulary_file is not None:
        from store.understanding.vocabulary import use_vocabulary_file

        try:
            use_vocabulary_file(settings.vocabulary_file)
        except ValueError as exc:
            raise ConfigError(f"PRDIGEST_VOCABULARY: {exc}") from None




def repo_option(func):
    return click.option("--repo", help="OWNER/NAME; defaults to the first of PRDIGEST_REPOS.")(func)


@overload
def area_name(value: str) -> str: ...
@overload
def area_name(value: None) -> None: ...
def area_name(value: str | None) -> str | None:
    from store.understanding.areas import UnknownArea, require_area

    if value is None:
        return None
    try:
        return require_area(value)
    except UnknownArea as exc:
        raise click.BadParameter(str(exc), param_hint="--area") from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@db_option
@click.version_option(package_name="prdigest")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """prdigest: what merged in a busy GitHub repository, as a daily report and answers.

    --db PATH goes before or after the command."""
    log_to_stderr()  # before anything can log, so that every record is masked
    try:
        settings = Settings.from_env()
        use_log_format(settings.log_format)
        # Registered once, before anything can store, log, post or print: every output masks them from here on.
        use_secrets(settings.secrets)
        use_operator_files(settings)
    except ConfigError as exc:
        if ctx.invoked_subcommand != "doctor":
            raise
        from bot.doctor import FAILED

        click.echo(f"{FAILED} settings: {exc} (the other checks need settings that read)")
        sys.exit(1)
    ctx.obj = AppContext(settings)


@cli.command(name="import")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--repo", help="OWNER/NAME of reports that list no PRs (default: the first of PRDIGEST_REPOS).")
@click.option("--sample", is_flag=True, help="Load the example reports that come with prdigest, to try it on.")
@pass_app(creates=True)
def import_(app: AppContext, files: tuple[Path, ...], repo: str | None, sample: bool) -> None:
    """Import daily report files (Markdown). Re-importing a file updates, never duplicates."""
    from store.sources.importer import ReportImportError, import_files, web_host

    if bool(files) == sample:
        raise click.UsageError("give report files to import, or --sample for the example reports")
    if sample:
        from bot.terminal.sample import loaded_lines

        click.echo("\n".join(loaded_lines(app.db, app.settings, command="prdigest ")))
        return
    failed = 0
    host = web_host(app.settings.github_api_url)
    for done in import_files(app.db, files, app.settings.timezone, app.repo(repo), host):
        if isinstance(done, ReportImportError):
            print_error(done)
            failed += 1
            continue
        # A file's name is as untrusted as its text: "ESC]0;…BEL" in it would retitle the terminal.
        click.echo(neutralize(done.describe()))
    if failed:
        sys.exit(1)


@cli.command()
@click.option("--date", "day", help="A local day: 2026-02-13, feb 13, yesterday (default: today in PRDIGEST_TIMEZONE).")
@click.option("--area", help="Only PRs in this area (name or alias).")
@click.option("--format", "fmt", type=click.Choice(["markdown", "slack", "json"]), default="markdown", show_default=True)
@repo_option
@pass_app(creates=False)
def report(app: AppContext, day: str | None, area: str | None, fmt: str, repo: str | None) -> None:
    """Print the daily report of one day."""
    from bot.messages.blocks import daily_report_messages
    from store.report.day import load_report, report_json, report_markdown

    name, target, chosen = app.repo(repo), app.day(day) or app.today(), area_name(area)  # checked before the store
    daily = load_report(app.db, name, target, app.settings.timezone, area=chosen)
    notice = empty_store_notice(app.db, name) or (None if daily.prs else _outside(app, name, target))
    if notice:  # on stderr: the report itself stays in its format for scripts
        click.echo(f"prdigest: note: {neutralize(notice)}", err=True)
    if fmt == "json":
        click.echo(to_json(report_json(daily), indent=2))
    elif fmt == "slack":
        click.echo(neutralize("\n\n".join(message.shown for message in daily_report_messages(daily))))
    else:
        click.echo(neutralize(report_markdown(daily)), nl=False)


def _outside(app: AppContext, repo: str, day: date) -> str | None:
    """Where the store's PRs of `repo` are, when `day` is past either end of them; None when it is not."""
    from store.tables.prs import held

    found = held(app.db, repo)
    if found is None:
        return None
    tz = app.settings.timezone
    first, last = found.first.astimezone(tz).date(), found.last.astimezone(tz).date()
    if first <= day <= last:
        return None
    nearest = last if day > last else first
    return (f"nothing merged in {repo} on {day}: the store holds its PRs merged from {first} to {last}"
            f" ({tz.key} days); try --date {nearest}")


@cli.command()
@click.option("--date", "day", help="The PRs merged on this local day: 2026-02-13, feb 13, yesterday.")
@click.option("--pr", "numbers", type=click.IntRange(1), multiple=True, help="This PR; repeatable.")
@click.option("--missing", is_flag=True, help="Every PR without a summary from the current model and prompt, and those marked for retry.")
@click.option("--force", is_flag=True, help="Summarize again even PRs with a current (or imported) summary.")
@repo_option
@pass_app(creates=False)
def summarize(app: AppContext, day: str | None, numbers: tuple[int, ...], missing: bool, force: bool, repo: str | None) -> None:
    """Summarize PRs with the configured model. PRs already summarized by this model and prompt cost nothing."""
    from bot.model.client import llm_from_settings, unconfigured_reason
    from bot.model.prompt import PROMPT_VERSION
    from bot.model.summarize import summarize_prs
    from store.days import day_bounds
    from store.tables.prs import get_pr, prs_merged_between
    from store.tables.summaries import prs_needing_summary

    if [day is not None, bool(numbers), missing].count(True) != 1:
        raise click.UsageError("choose one of --date, --pr or --missing")
    name, target = app.repo(repo), app.day(day)
    llm = llm_from_settings(app.settings)
    if llm is None:
        raise click.ClickException(f"{unconfigured_reason(app.settings)}; PRs keep their extractive summaries")
    if missing:
        prs = prs_needing_summary(app.db, name, llm.model, PROMPT_VERSION)
    elif target:
        prs = prs_merged_between(app.db, name, *day_bounds(target, app.settings.timezone))
    else:
        found = {number: get_pr(app.db, name, number) for number in numbers}
        unknown = [f"#{number}" for number, pr in found.items() if pr is None]
        if unknown:
            raise click.ClickException(f"not in the store for {name}: {', '.join(unknown)} (run prdigest ingest first)")
        prs = [pr for pr in found.values() if pr is not None]  # all of them: none is unknown

    def done(pr, error: str | None) -> None:
        click.echo(f"#{pr.number} failed: {one_line(error)}" if error else f"#{pr.number} summarized", err=bool(error))

    with llm:
        run = summarize_prs(app.db, app.settings, prs, llm, force=force, on_done=done)
    click.echo(neutralize(f"{name}: {run.describe()}"))
    if run.failed:
        raise click.ClickException(
            f"{len(run.failed)} of {len(prs)} PRs could not be summarized; they keep their summaries "
            "and are marked for retry (prdigest summarize --missing)"
        )


@cli.command()
@click.option("--days", type=click.IntRange(1, 366), default=7, show_default=True, help="Days of model calls to show, ending today.")
@click.option("--weeks", type=click.IntRange(1, 520), default=8, show_default=True,
              help="Weeks of votes on answers to show, ending with this one.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@repo_option
@pass_app(creates=False)
def stats(app: AppContext, days: int, weeks: int, as_json: bool, repo: str | None) -> None:
    """PRs by summary source, model calls and tokens per day, PRs waiting for a summary retry, and the
    votes on answers per week."""
    from bot.answers.feedback import votes_json, votes_text
    from bot.model.cost import stats_json, stats_text
    from bot.model.prompt import PROMPT_VERSION
    from store.tables.feedback import weekly_votes
    from store.tables.prs import holdings
    from store.tables.summaries import summary_stats

    settings = app.settings
    held = holdings(app.db)
    figures = summary_stats(app.db, app.repo(repo), settings.timezone, app.today(), days, settings.model, PROMPT_VERSION)
    since = app.today() - timedelta(days=app.today().weekday() + 7 * (weeks - 1))
    votes = weekly_votes(app.db, settings.timezone, since)
    # Errors stored before they were masked on the way in are masked on the way out, as every output is.
    if as_json:
        store = {"path": str(settings.db_path), "repos": [_held_json(item, settings.timezone) for item in held]}
        click.echo(to_json({"store": store, **stats_json(figures, settings), "votes": votes_json(votes)}, indent=2))
        return
    tz = settings.timezone
    what = [f"The store {settings.db_path} holds " + (f"PRs of {len(held)} repositor{'y' if len(held) == 1 else 'ies'}:" if held else "no PRs yet.")]
    what += [f"  {item.describe(tz)}" for item in held]
    click.echo(neutralize("\n".join([*what, stats_text(figures, settings), *votes_text(votes, since, tz.key)])))


def _held_json(item: Held, tz: ZoneInfo) -> dict[str, object]:
    first, last = item.first.astimezone(tz).date(), item.last.astimezone(tz).date()
    return {"repo": item.repo, "prs": item.prs, "first_day": first.isoformat(), "last_day": last.isoformat()}


@cli.group()
def feedback() -> None:
    """The 👍/👎 people gave the bot's answers in Slack."""


@feedback.command(name="export")
@click.option("--since", help="Only votes cast from this local day on: 2026-02-13, feb 13, last monday (default: all).")
@click.option("--format", "fmt", type=click.Choice(["jsonl"]), default="jsonl", show_default=True,
              help='jsonl: one evaluation line per answer marked 👎, {"q", "cited", "expected", "comment", ...}.')
@pass_app(creates=False)
def feedback_export(app: AppContext, since: str | None, fmt: str) -> None:
    """Write the answers marked 👎 as evaluation lines, which `python bench/eval.py --questions FILE` scores."""
    from bot.answers.feedback import evaluation_lines
    from store.days import day_bounds

    first = app.day(since, "--since")
    start = day_bounds(first, app.settings.timezone)[0] if first else None
    for line in evaluation_lines(app.runtime(), start):
        click.echo(to_json(line))  # masked, as every output is: a question or comment may hold a pasted token


@cli.command()
@click.option("--repo", help="OWNER/NAME (default: every repository in PRDIGEST_REPOS).")
@click.option("--since", help="First local day: 2026-02-13, feb 13, yesterday (default: where the last run stopped; first run: yesterday).")
@click.option("--until", help="Last local day: 2026-02-13, feb 13, yesterday (default: today).")
@pass_app(creates=True)
def ingest(app: AppContext, repo: str | None, since: str | None, until: str | None) -> None:
    """Fetch merged PRs and releases from GitHub into the store. Cheap to run every few minutes."""
    from bot.ingest import describe, describe_releases, github_client
    from bot.model.summarize import summarize_ingested
    from bot.terminal.progress import TerminalProgress
    from store.sources.github import BadToken, GitHubError
    from store.sources.ingest import ingest_repo, plan_window
    from store.sources.releases import ingest_releases

    first, last = app.day(since, "--since"), app.day(until, "--until")
    if first and last and first > last:
        raise click.BadParameter(f"{first} is after --until {last}", param_hint="--since")
    repos = [app.repo(repo)] if repo else list(app.settings.repos)
    progress = TerminalProgress()
    failed = 0
    with github_client(app.settings, on_wait=progress.waiting, on_warning=progress.warn) as client:
        for name in repos:
            window = plan_window(app.db, name, app.settings.timezone, first, last, datetime.now(app.settings.timezone))
            before = client.requests
            try:
                done = ingest_repo(app.db, client, name, window, progress)
            except BadToken as exc:
                progress.clear()
                raise click.ClickException(str(exc)) from None
            except GitHubError as exc:
                progress.clear()
                print_error(f"{name}: {exc}")
                failed += 1
                continue
            progress.clear()
            click.echo(neutralize(describe(done, app.settings.timezone, client.requests - before)))
            summarized = summarize_ingested(app.db, app.settings, name, window.start, window.end, client)
            if summarized and summarized.calls:
                click.echo(neutralize(f"{name}: {summarized.describe()}"))
            before = client.requests
            try:
                releases = ingest_releases(app.db, client, name, window.start)
            except GitHubError as exc:  # a bad token was refused above, by the PRs' first request
                progress.clear()
                print_error(f"{name}: {exc}")
                failed += 1
                continue
            progress.clear()
            click.echo(neutralize(describe_releases(releases, client.requests - before)))
    if failed:
        sys.exit(1)


@cli.command(name="release-notes")
@click.argument("tag")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
@click.option("--offline", is_flag=True, help="Only what the store holds: map nothing and fetch no PR from GitHub.")
@repo_option
@pass_app(creates=False)
def release_notes(app: AppContext, tag: str, fmt: str, offline: bool, repo: str | None) -> None:
    """Draft the notes of release TAG (or `latest`) from the exact list of PRs its range names."""
    from bot.answers.release_notes import NotesError, draft_notes, notes_json, notes_markdown

    name, settings = app.repo(repo), app.settings
    online = settings.github_configured and not offline
    try:
        notes = draft_notes(app.db, settings, name, tag, online=online, lead=fmt == "markdown")
    except NotesError as exc:
        raise click.ClickException(str(exc)) from None
    for warning in notes.warnings:
        click.echo(f"prdigest: warning: {one_line(warning)}", err=True)
    if fmt == "json":
        click.echo(to_json(notes_json(notes, settings.timezone), indent=2))
    else:
        click.echo(neutralize(notes_markdown(notes, settings.timezone)), nl=False)


@cli.command()
@click.option("--http", "port", type=click.IntRange(0, 65535), help="Serve HTTP on this port (POST /slack/events) instead of Socket Mode.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to listen on with --http, --health-port and --install-port (behind a reverse proxy: 127.0.0.1; 0.0.0.0 for every one).")
@click.option("--health-port", type=click.IntRange(0, 65535),
              help="Serve GET /healthz and /readyz on this port too, in Socket Mode as well (default: $PRDIGEST_HEALTH_PORT).")
@click.option(
    "--install-port", type=click.IntRange(0, 65535), default=3000, show_default=True,
    help="In Socket Mode with SLACK_CLIENT_ID and SLACK_CLIENT_SECRET: the port of the install pages (/slack/install).",
)
@pass_app(creates=True)
def serve(app: AppContext, port: int | None, host: str, health_port: int | None, install_port: int) -> None:
    """Run the Slack bot and the daily report scheduler. Without Slack tokens: the local shell."""
    from bot.slack.server import serve as serve_slack

    health_port = health_port if health_port is not None else app.settings.health_port
    serve_slack(app.runtime(), port, host, health_port, install_port)


def channel_option(func):
    func = click.option("--channel", help="Slack channel ID (C...) the commands act for, e.g. for subscribe.")(func)
    return team_option(func)


def team_option(func):
    return click.option(
        "--team", help="The workspace (T...) of --channel, where the store serves several (default: its only one)."
    )(func)


@cli.command()
@click.argument("text")
@channel_option
@click.option(
    "--format", "fmt", type=click.Choice(["mrkdwn", "text"]),
    help="mrkdwn: exactly what Slack gets; text: as the shell prints it. Default: text on a terminal, mrkdwn in a pipe or a file.",
)
@pass_app(creates=False)
def run(app: AppContext, text: str, channel: str | None, team: str | None, fmt: str | None) -> None:
    """Print the Slack message the bot answers TEXT with: "/prdigest today", "@prdigest QUESTION"."""
    from bot.terminal.shell import Conversation

    if not text.strip():
        raise click.UsageError('run what? Give a command or a question, like: prdigest run "today"')
    fmt = fmt or ("text" if sys.stdout.isatty() else "mrkdwn")  # a person reads text; a script reads what Slack gets
    runtime = app.runtime()
    reply = Conversation(runtime, channel, app.team(team)).say(text)
    # Even the exact mrkdwn loses the control characters a PR title could use to drive the terminal.
    click.echo(neutralize(reply.text) if fmt == "mrkdwn" else render(reply.text, Style.for_stream(sys.stdout)))
    if reply.error:
        sys.exit(1)


@cli.command()
@channel_option
@pass_app(creates=False)
def shell(app: AppContext, channel: str | None, team: str | None) -> None:
    """Answer commands and @prdigest questions typed one per line, as the bot would in Slack."""
    from bot.terminal.shell import prompted_lines
    from bot.terminal.shell import shell as run_shell

    runtime = app.runtime()
    run_shell(runtime, prompted_lines(), sys.stdout, sys.stderr, channel, app.team(team))


@cli.command(name="post-daily")
@click.option("--channel", required=True, help="Slack channel ID (C...), or a user ID (U...) for their direct messages.")
@click.option("--date", "day", help="The report's last local day: 2026-02-13, feb 13, yesterday (default: yesterday); for --weekly, the week's.")
@click.option("--area", "areas", multiple=True, help="Only PRs in this area; repeatable (replaces the subscription's filter).")
@click.option("--filter", "rule", help="A filter, as `subscribe` takes it: 'rocm -bots path:docs/**' (replaces the subscription's).")
@click.option("--weekly", is_flag=True, help="The weekly report (the default when the channel subscribes to it alone).")
@click.option("--dry-run", is_flag=True, help="Print the messages; post and record nothing.")
@repo_option
@team_option
@pass_app(creates=True)
def post_daily(
    app: AppContext, channel: str, day: str | None, areas: tuple[str, ...], rule: str | None, weekly: bool, dry_run: bool,
    repo: str | None, team: str | None,
) -> None:
    """Post the channel's report to it as a thread, exactly once: a second run posts nothing, a broken one resumes.

    It posts what the channel's subscription would: its filter, and for `weekdays` the days since the last
    report (a Friday is in Monday's)."""
    from slack_sdk.errors import SlackApiError

    from bot.slack.daily import ClaimLost, DailyPoster, repo_ingester, report_messages, subscription_report

    runtime = app.runtime()
    name = app.repo(repo)
    target = app.day(day) or app.today() - timedelta(days=1)
    client, where = (None, app.team(team)) if dry_run else _workspace(app, runtime, team)
    sub = _subscription_for(runtime.db, where, channel, name, weekly, [area_name(area) for area in areas], rule)
    last = sub.cadence.report_for(target)
    if client is None:
        messages = report_messages(subscription_report(runtime.db, app.settings, sub, last), sub)
        click.echo(neutralize("\n\n".join(message.shown for message in messages)))
        click.echo(f"dry run: {len(messages)} message(s) for {channel}; nothing posted", err=True)
        return
    ingest = repo_ingester(runtime)
    if ingest:
        try:
            ingest(name)
        except Exception as exc:  # post from the store as it is; the report says what it holds
            click.echo(f"prdigest: warning: ingest of {name} failed, posting from the store: {one_line(exc)}", err=True)
    try:
        outcome = DailyPoster(client, runtime).post(sub, last)
    except SlackApiError as exc:
        raise click.ClickException(
            f"Slack refused the post to {channel}: {exc.response.get('error', exc.response.status_code)}; "
            "running the command again resumes the thread"
        ) from None
    except ClaimLost as exc:
        raise click.ClickException(f"{exc}; it finishes the thread") from None
    click.echo(neutralize(outcome.describe()))


def _workspace(app: AppContext, runtime: Runtime, given: str | None) -> tuple[WebClient, Team]:
    """The client that posts, and the workspace it posts in: SLACK_BOT_TOKEN's (whose store this becomes at its
    first start), or the installation of the one --team names."""
    from bot.slack.app import slack_client
    from bot.slack.server import slack_refusal
    from bot.slack.workspaces import Installed, one_workspace

    settings = app.settings
    if settings.slack_bot_token:
        try:
            workspace = one_workspace(runtime, slack_client(settings))
        except Exception as exc:  # a bad token, or no way to reach Slack
            raise click.ClickException(slack_refusal(settings.slack_api_url, exc)) from None
        if given not in (None, workspace.team.team_id):
            raise click.BadParameter(f"SLACK_BOT_TOKEN is of workspace {workspace.team}, not {given}", param_hint="--team")
        return workspace.team_client, workspace.team
    if not settings.installable:
        raise click.ClickException(
            "SLACK_BOT_TOKEN is not set (the xoxb- token under OAuth & Permissions); or set SLACK_CLIENT_ID and "
            "SLACK_CLIENT_SECRET to post with the token of a workspace that installed the app"
        )
    team = app.team(given)
    client = Installed(runtime, lambda token: slack_client(settings, token)).client(team)
    if client is None:
        raise click.ClickException(f"workspace {team} has not installed the app (or has uninstalled it)")
    return client, team


def _subscription_for(
    db: Database, team: Team, channel: str, repo: str, weekly: bool, areas: list[str], rule: str | None
) -> Subscription:
    """The channel's daily (or weekdays) subscription, else its weekly one (or that with --weekly), else a daily report
    of everything; --area and --filter replace its filter."""
    from store.subscription.cadence import DAILY, WEEKLY, Cadence
    from store.subscription.filter import FilterError, parse_filter, split_terms
    from store.tables.subscriptions import Subscription, get_subscription

    daily, every_week = get_subscription(db, team, channel, repo, DAILY), get_subscription(db, team, channel, repo, WEEKLY)
    sub = (every_week if weekly or daily is None else daily) or daily or Subscription(channel, repo, datetime.now(UTC), team=team)
    if weekly and sub.cadence.name != WEEKLY:
        sub = replace(sub, cadence=Cadence(WEEKLY))
    if areas or rule:
        try:
            sub = replace(sub, filter=parse_filter([*areas, *split_terms(rule or "")], repo))
        except FilterError as exc:
            raise click.BadParameter(str(exc), param_hint="--filter") from None
    return sub


@cli.command()
@pass_app(creates=False)
def doctor(app: AppContext) -> None:
    """Check every part prdigest depends on, one line each (✓ passed, ✗ failed, – not configured): the settings in
    effect and where each came from, the store, Slack and its scopes, GitHub and its rate limit, the model.
    Exits 1 when a check fails."""
    from bot.doctor import FAILED, checks

    failed = False
    for check in checks(app.settings, db_given=DB_KEY in click.get_current_context().meta):
        click.echo(neutralize(check.shown()))
        failed = failed or check.mark == FAILED
    if failed:
        sys.exit(1)


@cli.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@pass_app(creates=False)
def backup(app: AppContext, path: Path) -> None:
    """Copy the store to PATH while it is in use, as of one moment (SQLite's online backup), checked with
    integrity_check; the copy is 0600, and replaces PATH only once it is whole."""
    from store.db import back_up

    copy = back_up(app.db, path)
    click.echo(neutralize(f"backed up {app.settings.db_path} to {path}: {copy.size / 1e6:,.1f} MB, "
                          f"{plural(copy.prs, 'PR')}; integrity_check ok"))


@cli.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", type=click.IntRange(1, 100), default=10, show_default=True, help="At most this many PRs.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, best first.")
@repo_option
@pass_app(creates=False)
def search(app: AppContext, query: tuple[str, ...], limit: int, as_json: bool, repo: str | None) -> None:
    """Find merged PRs: words, a time ("yesterday", "since Feb 9"), a person, an area, a PR number."""
    from store.retrieval.search import search_prs

    text, name = typed(" ".join(query)), app.repo(repo)
    result = search_prs(app.db, text, name, app.settings.timezone, limit=limit)
    if result.question.is_empty and not result.hits:
        problems = "; ".join(result.question.problems)
        raise click.UsageError(problems or f"nothing to search for in {text!r}: give words, a time, a person, an area or a PR number")
    tz = app.settings.timezone
    # On an empty store, "no PRs merged in rocm" would read as news: the notice says why nothing is found.
    note = empty_store_notice(app.db, name) or result.note
    if as_json:
        if note:
            click.echo(f"prdigest: note: {neutralize(note)}", err=True)
        rows = [
            {
                "number": hit.pr.number,
                "title": hit.pr.title,
                "url": hit.pr.url,
                "score": hit.score,
                "areas": hit.pr.areas,
                "merged_at": hit.pr.merged_at.astimezone(tz).isoformat(),
            }
            for hit in result.hits
        ]
        click.echo(to_json(rows, indent=2))
        return
    if note:
        click.echo(neutralize(note))
    # A search by person, time or area alone ranks nothing: every score is 0, and a column of them says nothing.
    ranked = any(hit.score for hit in result.hits)
    for hit in result.hits:
        pr = hit.pr
        areas = f"  ({', '.join(pr.areas)})" if pr.areas else ""
        score = f"{hit.score:.2f}  " if ranked else ""
        click.echo(neutralize(f"{score}#{pr.number}  {pr.merged_at.astimezone(tz):%Y-%m-%d %H:%M}  {pr.author}  {pr.title}{areas}"))


@cli.command()
@click.argument("question", nargs=-1, required=True)
@click.option("--limit", type=click.IntRange(1, 1000), help="List at most this many PRs (default 10).")
@click.option("--json", "as_json", is_flag=True, help='Print {"answer": ..., "citations": [...]}.')
@repo_option
@pass_app(creates=False)
def ask(app: AppContext, question: tuple[str, ...], limit: int | None, as_json: bool, repo: str | None) -> None:
    """Answer a question about merged PRs as an @-mention would: every configured repository, or the one
    the question names; --repo keeps to one."""
    from bot.answers.mentions import replies_message, reply_to
    from store.tables.teams import NO_TEAM

    text = typed(" ".join(question)).strip()
    if not text:
        raise click.UsageError('ask what? Give a question, like: prdigest ask "what changed in rocm this week?"')
    runtime = app.runtime()
    # A question without a channel: the repositories configured and stored, as in a workspace's new channel.
    replies = reply_to(runtime, text, NO_TEAM, only=app.repo(repo) if repo else None, limit=limit)
    if replies.model_down:
        click.echo(f"prdigest: warning: {one_line(replies.model_down)}; answering from the store alone", err=True)
    if as_json:
        click.echo(to_json(_replies_json(replies), indent=2))
        return
    click.echo(render(replies_message(replies, app.settings.timezone).shown, Style.for_stream(sys.stdout)))


def _replies_json(replies: Replies) -> dict[str, object]:
    """{"answer", "citations"}: citations are numbers for one repository, OWNER/NAME#N for several; the answer is
    plain text, without Slack's markup."""
    shown = replies.shown()
    if replies.refusal or not shown:
        return {"answer": render(replies.refusal or ""), "citations": []}
    if len(shown) == 1:
        return {"answer": shown[0][1].plain, "citations": shown[0][1].citations}
    return {
        "answer": "\n\n".join(f"{repo}:\n{reply.plain}" for repo, reply in shown),
        "citations": [f"{repo}#{number}" for repo, reply in shown for number in reply.citations],
    }


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; every failure becomes one line on stderr, never a traceback."""
    try:
        code = cli.main(args=argv, prog_name="prdigest", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        code = 0
    except click.UsageError as exc:
        _fail(exc.format_message(), 2)
    except click.ClickException as exc:
        _fail(exc.format_message(), exc.exit_code)
    except StoreMissing as exc:  # a mistyped --db is a usage error
        _fail(str(exc), 2)
    except (ConfigError, StoreError) as exc:
        _fail(str(exc), 1)
    except (click.Abort, KeyboardInterrupt):
        _fail("interrupted", 130)
    except Exception as exc:  # the promise is no traceback for any input
        _fail(f"unexpected {type(exc).__name__}: {exc}", 1)
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, code: int) -> None:
    print_error(message)
    sys.exit(code)


def print_error(message: object) -> None:
    """One line on stderr, whatever line breaks the message carried."""
    click.echo(error_line(one_line(message, limit=2000)), err=True)

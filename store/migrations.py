"""Schema migrations, applied in order by `store.db.open_db`.

Each migration is frozen: it holds all of its logic and calls no application
code, so what an old store goes through never changes when the application
does. Names number the migrations in the order they run. Data derived from the
PRs (their relations) is not a migration's job: `store.db` reads it again
whenever the code that derives it changes.
"""
from __future__ import annotations

import json
from datetime import datetime

from sqlite_utils import Database, Migrations

migrations = Migrations("prdigest")

# The names the migrations were released under, before they were numbered in
# the order they run; `rename_released` moves a store's records to the new names.
# m080_relations_read_again read every PR's relations again: relations now follow
# the reader's version (store.db), so its record is left as it is and unused.
RELEASED_NAMES = {
    "m040_slack": "m002_slack",
    "m010_github_updated_at": "m003_github_updated_at",
    "m030_search": "m004_search",
    "m020_model_summaries": "m005_model_summaries",
    "m070_merge_time_ids": "m006_merge_time_ids",
    "m060_post_claims": "m007_post_claims",
    "m050_model_replies": "m008_model_replies",
    "m090_live_alerts": "m009_live_alerts",
}

# Columns indexed for full-text search, in the order bm25() weights refer to them.
# The migrations that build the index use them as they stand: a change to the
# index is a new migration that rebuilds it.
FTS_COLUMNS = ("title", "what_changed", "impact", "risks", "insights", "files", "author", "areas")

# Tables are named with db.table(), not db[...]: the store holds no views, and
# db[...] is typed as "table or view", which has no create, add_column or transform.


@migrations()
def m001_initial(db: Database) -> None:
    db.table("repos").create(
        {"name": str, "report_title": str, "ingest_cursor": str, "updated_at": str},
        pk="name",
    )
    # An explicit integer id because external-content FTS is keyed by rowid,
    # and implicit rowids are not stable across VACUUM.
    db.table("prs").create(
        {
            "id": int,
            "repo": str,
            "number": int,
            "title": str,
            "url": str,
            "body": str,
            "author": str,
            "merged_by": str,
            "merged_at": str,  # UTC, "YYYY-MM-DDTHH:MM:SSZ", so text order is time order
            "additions": int,
            "deletions": int,
            "changed_files": int,  # GitHub's count; may exceed len(files) on huge PRs
            "files": str,  # JSON list of paths
            "labels": str,  # JSON list
            "areas": str,  # JSON list of canonical area names
            "type": str,  # substantial | trivial
            "what_changed": str,
            "impact": str,
            "risks": str,
            "insights": str,
            "summary_source": str,  # imported | extractive | model:<name>
            "created_at": str,
            "updated_at": str,
        },
        pk="id",
        not_null={"repo", "number", "title", "url", "merged_at", "type"},
        defaults={"body": "", "files": "[]", "labels": "[]", "areas": "[]"},
    )
    db.table("prs").create_index(["repo", "number"], unique=True)
    db.table("prs").create_index(["repo", "merged_at"])
    db.table("prs").enable_fts(list(FTS_COLUMNS), tokenize="porter", create_triggers=True)
    # The header of an imported report, so that rendering the day again gives the same text.
    db.table("reports").create(
        {"repo": str, "date": str, "tz_label": str, "source": str, "imported_at": str},
        pk=("repo", "date"),
    )


@migrations()
def m002_slack(db: Database) -> None:
    # A channel follows a repository once; an empty areas list means the whole report.
    db.table("subscriptions").create(
        {"channel": str, "repo": str, "areas": str, "post_at": str, "created_by": str, "created_at": str},
        pk=("channel", "repo"),
        not_null={"post_at", "created_at"},
        defaults={"areas": "[]"},
    )
    # The messages are stored as planned before the first is sent, so a restart
    # resumes the same thread with the same replies even if the store changed since.
    db.table("daily_posts").create(
        {
            "channel": str,
            "repo": str,
            "date": str,
            "messages": str,  # JSON list of {text, blocks}; the first is the thread's parent
            "parent_ts": str,
            "replies_sent": int,
            "state": str,  # posting | done | empty
            "created_at": str,
            "updated_at": str,
        },
        pk=("channel", "repo", "date"),
        not_null={"messages", "replies_sent", "state"},
    )
    # Questions asked by mention, so a follow-up in the same thread keeps its context;
    # (channel, ts) is unique so a retried event is answered once.
    db.table("thread_turns").create(
        {"id": int, "channel": str, "thread_ts": str, "ts": str, "question": str, "created_at": str},
        pk="id",
        not_null={"channel", "thread_ts", "ts", "question"},
    )
    db.table("thread_turns").create_index(["channel", "ts"], unique=True)
    db.table("thread_turns").create_index(["channel", "thread_ts"])


@migrations()
def m003_github_updated_at(db: Database) -> None:
    # GitHub's updated_at of the version stored, so ingesting a window again
    # skips the PRs that did not change since, and refreshes those that did.
    db.table("prs").add_column("github_updated_at", str)


@migrations()
def m004_search(db: Database) -> None:
    # One row per (PR, other PR it refers to): reverts, regression fixes, follow-ups, mentions.
    db.table("pr_relations").create(
        {"repo": str, "source": int, "target": int, "kind": str},
        pk=("repo", "source", "target"),
        not_null={"kind"},
    )
    db.table("pr_relations").create_index(["repo", "target"])
    # Logins compare without case on GitHub; merged_at last so a person's PRs
    # in a time window come straight from the index.
    db.execute("create index prs_repo_author on prs (repo, author collate nocase, merged_at)")
    db.execute("create index prs_repo_merged_by on prs (repo, merged_by collate nocase, merged_at)")
    # Finding the PR a `Revert "<title>"` PR reverts.
    db.execute("create index prs_repo_title on prs (repo, title)")


@migrations()
def m005_model_summaries(db: Database) -> None:
    # The prompt version behind a model summary (the model is in summary_source):
    # a new prompt or model summarizes again, an unchanged one never pays twice.
    db.table("prs").add_column("summary_prompt", str)
    db.table("prs").add_column("summarized_at", str)
    # Why the last model attempt failed; set means "waiting for a retry".
    db.table("prs").add_column("summary_retry", str)
    # Every model call and its token usage, so the cost of a day and of a PR is visible.
    db.table("model_calls").create(
        {
            "id": int,
            "at": str,  # UTC, like prs.merged_at
            "purpose": str,  # summary | answer
            "model": str,
            "prompt_version": str,
            "repo": str,
            "number": int,
            "outcome": str,  # ok | unparsed | error
            "error": str,
            "tokens_in": int,
            "tokens_out": int,
            "seconds": float,
        },
        pk="id",
        not_null={"at", "purpose", "model", "outcome"},
        defaults={"tokens_in": 0, "tokens_out": 0},
    )
    db.table("model_calls").create_index(["at"])
    db.table("model_calls").create_index(["repo", "number"])


@migrations()
def m006_merge_time_ids(db: Database) -> None:
    # Row ids, and so FTS rowids, now sort by merge time: the merge second
    # times 2**20, plus the PR number modulo 2**20, or the next id of that
    # second that is free. The index is rebuilt once rather than moved row by
    # row by its update trigger.
    per_second = 1 << 20
    taken: set[int] = set()
    moves = []
    for row_id, number, merged_at in db.execute("select id, number, merged_at from prs order by merged_at, id").fetchall():
        second = int(datetime.fromisoformat(merged_at.replace("Z", "+00:00")).timestamp())
        slot = number % per_second
        while second * per_second + slot in taken:
            slot = (slot + 1) % per_second
        taken.add(second * per_second + slot)
        moves.append((second * per_second + slot, row_id))
    db.table("prs").disable_fts()
    db.conn.executemany("update prs set id = ? where id = ?", moves)
    db.table("prs").enable_fts(list(FTS_COLUMNS), tokenize="porter", create_triggers=True)


@migrations()
def m007_post_claims(db: Database) -> None:
    # A channel may be posted a day's report once per set of areas, so the areas join the key.
    # The holder (owner) of a post renews lease_until (unix seconds) while it sends; a
    # post whose lease ran out is taken over. in_flight is the part being sent, set before
    # the send and cleared when its ts is recorded, so a new holder knows to read the thread back.
    table = db.table("daily_posts")
    table.add_column("areas", str, not_null_default="[]")
    table.add_column("owner", str)
    table.add_column("lease_until", float)
    table.add_column("in_flight", int)
    table.add_column("sent_at", float)  # unix seconds when in_flight was sent
    table.transform(pk=("channel", "repo", "date", "areas"))


@migrations()
def m008_model_replies(db: Database) -> None:
    # Failed attempts since the last good summary; at PRDIGEST_SUMMARY_MAX_FAILURES a PR
    # stops being retried until a forced run, so one unreadable PR does not cost a call every run.
    db.table("prs").add_column("summary_failures", int)
    # Reasoning models spend tokens that never reach the reply; they are part of tokens_out.
    db.table("model_calls").add_column("reasoning_tokens", int, not_null_default=0)
    db.table("structured_output").create(
        {"base_url": str, "model": str, "accepted": int, "note": str, "checked_at": str},
        pk=("base_url", "model"),
        not_null={"accepted", "checked_at"},
    )


@migrations()
def m009_live_alerts(db: Database) -> None:
    # A channel may follow a repository both ways: the daily report, and live alerts.
    subscriptions = db.table("subscriptions")
    subscriptions.add_column("mode", str, not_null_default="daily")
    subscriptions.transform(pk=("channel", "repo", "mode"))
    # A live alert is a post of one message, numbered per channel, repository and day
    # (batch 0 is the daily report), so it is claimed, sent and read back like one.
    posts = db.table("daily_posts")
    posts.add_column("batch", int, not_null_default=0)
    posts.transform(pk=("channel", "repo", "date", "areas", "batch"))
    # Each PR a channel was alerted to, and the post that carries it: a PR is planned into one post only.
    db.table("live_alerts").create(
        {"channel": str, "repo": str, "number": int, "date": str, "batch": int, "areas": str},
        pk=("channel", "repo", "number"),
        not_null={"date", "batch", "areas"},
    )
    db.table("live_alerts").create_index(["channel", "repo", "date"])


@migrations()
def m010_link_previews(db: Database) -> None:
    # Channels that asked for PR link previews. None does by default: a workspace may also run
    # GitHub's own app, whose preview of the same link would come beside ours.
    db.table("preview_channels").create(
        {"channel": str, "enabled_by": str, "enabled_at": str},
        pk="channel",
        not_null={"enabled_at"},
    )
    # When each PR was last previewed in each channel (unix seconds), so every process agrees that a
    # link pasted again soon after is previewed once.
    db.table("link_previews").create(
        {"channel": str, "repo": str, "number": int, "at": float},
        pk=("channel", "repo", "number"),
        not_null={"at"},
    )


@migrations()
def m011_answer_feedback(db: Database) -> None:
    # Each answer given in Slack (to a mention or `/prdigest ask`), so a vote on it knows what was asked
    # and what was cited; its id is the value of its vote buttons.
    db.table("answers").create(
        {
            "id": int,
            "kind": str,  # mention | ask
            "question": str,
            "history": str,  # JSON list: the thread's earlier questions, which a follow-up is read with
            "first_line": str,
            "citations": str,  # JSON list of OWNER/NAME#N
            "channel": str,
            "asked_by": str,
            "asked_at": str,  # UTC, like prs.merged_at
        },
        pk="id",
        not_null={"kind", "question", "asked_at"},
        defaults={"history": "[]", "citations": "[]"},
    )
    # One vote per person per answer: a second click changes it.
    db.table("answer_votes").create(
        {
            "answer_id": int,
            "user": str,
            "vote": str,  # up | down
            "comment": str,  # what was wrong, as typed in the modal
            "expected": str,  # JSON list of OWNER/NAME#N it should have cited; null when not given
            "voted_at": str,
        },
        pk=("answer_id", "user"),
        not_null={"vote", "voted_at"},
        foreign_keys=[("answer_id", "answers", "id")],
    )
    db.table("answer_votes").create_index(["voted_at"])


@migrations()
def m012_shared_replies(db: Database) -> None:
    # A private reply to a command, kept for its "Share in channel" button: the id is the button's value,
    # and shared_by is set once, by the first click, so the reply is posted once.
    db.table("shared_replies").create(
        {
            "id": str,
            "channel": str,
            "user": str,
            "messages": str,  # JSON list of {text, blocks}
            "created_at": float,  # unix seconds
            "shared_by": str,
            "shared_at": float,
        },
        pk="id",
        not_null={"messages", "created_at"},
    )
    db.table("shared_replies").create_index(["created_at"])


@migrations()
def m013_subscription_filters(db: Database) -> None:
    # A subscription keeps a filter (its canonical text, "rocm nvidia -bots path:docs/**") rather than a list
    # of areas, and a cadence: daily or weekdays (one slot, the `mode` "daily"), weekly on a day, live, or
    # my-prs (a person's own PRs). An areas list is the filter of those areas, which means the same.
    def joined(areas: str | None) -> str:
        return " ".join(json.loads(areas or "[]"))

    subscriptions = db.table("subscriptions")
    subscriptions.add_column("filter", str, not_null_default="")
    subscriptions.add_column("cadence", str, not_null_default="daily")
    subscriptions.add_column("weekday", int, not_null_default=0)
    for row in list(subscriptions.rows):
        subscriptions.update((row["channel"], row["repo"], row["mode"]), {"filter": joined(row["areas"]), "cadence": row["mode"]})
    subscriptions.transform(drop={"areas"})
    # A post is keyed by its kind (the slot of the subscription: daily, weekly, live, my-prs) and the filter's
    # text; batch 0 was a daily report and a later batch a live alert.
    posts = db.table("daily_posts")
    posts.add_column("kind", str, not_null_default="daily")
    posts.add_column("filter", str, not_null_default="")
    for row in list(posts.rows):
        posts.update((row["channel"], row["repo"], row["date"], row["areas"], row["batch"]),
                     {"kind": "live" if row["batch"] else "daily", "filter": joined(row["areas"])})
    posts.transform(pk=("channel", "repo", "kind", "date", "filter", "batch"), drop={"areas"})
    alerts = db.table("live_alerts")
    alerts.add_column("kind", str, not_null_default="live")
    alerts.add_column("filter", str, not_null_default="")
    for row in list(alerts.rows):
        alerts.update((row["channel"], row["repo"], row["number"]), {"filter": joined(row["areas"])})
    alerts.transform(pk=("channel", "repo", "kind", "number"), drop={"areas"})
    # A Slack user's GitHub login (for my-prs), and the direct-message channel Slack opened with them.
    db.table("people").create(
        {"user": str, "github": str, "dm_channel": str, "updated_at": str},
        pk="user",
        not_null={"updated_at"},
    )


@migrations()
def m014_signed_requests(db: Database) -> None:
    # The signatures of signed Slack requests handled within their freshness window, so that one
    # delivered again is handled once: after a restart too, and by any process sharing the store.
    # Keyed by the signature alone, without a rowid, so recording one writes one b-tree.
    db.execute(
        "create table signed_requests (signature text primary key, fresh_until integer not null) without rowid"
    )


@migrations()
def m015_releases(db: Database) -> None:
    # A repository's published releases (drafts are never stored). A release's range, the commits
    # from its previous release's tag to its own, is read once: mapped_at is set in the transaction
    # that writes its PRs, so a killed run maps it again from the start and never half.
    db.table("releases").create(
        {
            "repo": str,
            "tag": str,
            "name": str,
            "url": str,
            "published_at": str,  # UTC, like prs.merged_at
            "prerelease": int,
            "previous_tag": str,  # where its range starts; null for the first release, or until mapped
            "range_commits": int,  # commits in the range, once mapped
            "mapped_at": str,  # null until its PRs are recorded
            "created_at": str,
            "updated_at": str,
        },
        pk=("repo", "tag"),
        not_null={"name", "published_at", "prerelease", "created_at"},
        defaults={"name": "", "prerelease": 0},
    )
    db.table("releases").create_index(["repo", "published_at"])
    # Every PR number a release's range names, stored or not, so a PR the store lacks is still
    # listed by its number. A PR's first release is the one of these published first.
    db.table("release_prs").create({"repo": str, "tag": str, "number": int}, pk=("repo", "tag", "number"))
    db.table("release_prs").create_index(["repo", "number"])
    # When a listing of the repository's releases last reached its end: until then the oldest
    # release listed may not be the first, so no release is mapped without a previous one.
    db.table("repos").add_column("releases_listed_at", str)


@migrations()
def m016_release_posts(db: Database) -> None:
    # A release's thread is a post of its own (kind "releases"), keyed by its tag beside the day it came
    # out; every other post has none. The key is read from the table, whatever the migrations before made it.
    posts = db.table("daily_posts")
    posts.add_column("release", str, not_null_default="")
    posts.transform(pk=(*posts.pks, "release"))


@migrations()
def m017_thread_turn_answers(db: Database) -> None:
    # What each question of a thread was read as, and the PRs its answer cited, by repository (JSON), so a
    # follow-up is read against what was shown instead of being worked out again.
    db.table("thread_turns").add_column("answered", str)


@migrations()
def m018_reply_cache(db: Database) -> None:
    # Model replies kept by the exact request (a digest of it), per model and prompt version, so asking the
    # same again (an evaluation run once more) costs no call. `refused` holds a server's refusal of structured
    # output, which it gives every time it is asked the same.
    db.table("reply_cache").create(
        {"model": str, "prompt_version": str, "request": str, "text": str, "tokens_in": int, "tokens_out": int,
         "reasoning_tokens": int, "refused": str, "at": str},
        pk=("model", "prompt_version", "request"),
        not_null={"text", "at"},
        defaults={"tokens_in": 0, "tokens_out": 0, "reasoning_tokens": 0},
    )


@migrations()
def m019_teams(db: Database) -> None:
    # Each row belongs to a Slack workspace: its team_id, and inside an Enterprise Grid organisation its
    # enterprise_id. Channel and user IDs are unique within a team only, so the team leads every key holding one.
    # Rows made before now belong to no team yet (both empty); the first start with a bot token gives them its team.
    # A table keyed by its row id keeps its key; the others' keys are read from the table, whatever the
    # migrations before made them.
    keyed = ("subscriptions", "daily_posts", "live_alerts", "preview_channels", "link_previews", "people")
    for name in (*keyed, "thread_turns", "answers", "shared_replies"):
        table = db.table(name)
        key = table.pks
        table.add_column("enterprise_id", str, not_null_default="")
        table.add_column("team_id", str, not_null_default="")
        if name in keyed:
            table.transform(pk=("enterprise_id", "team_id", *key))
    for index in ("idx_thread_turns_channel_ts", "idx_thread_turns_channel_thread_ts", "idx_live_alerts_channel_repo_date"):
        db.execute(f"drop index if exists {index}")
    db.table("thread_turns").create_index(["enterprise_id", "team_id", "channel", "ts"], unique=True)
    db.table("thread_turns").create_index(["enterprise_id", "team_id", "channel", "thread_ts"])
    db.table("live_alerts").create_index(["enterprise_id", "team_id", "channel", "repo", "date"])
    # The workspace of the configured bot token, recorded at the first start with it.
    db.table("home_team").create(
        {"enterprise_id": str, "team_id": str, "recorded_at": str},
        pk=("enterprise_id", "team_id"),
        not_null={"recorded_at"},
    )
    # Each workspace that installed the app through its Add to Slack page (OAuth), with its bot token: the latest
    # installation of a team replaces the one before. A token that rotates keeps its refresh token and expiry.
    db.table("slack_installations").create(
        {
            "enterprise_id": str,
            "team_id": str,
            "app_id": str,
            "enterprise_name": str,
            "team_name": str,
            "is_enterprise_install": int,
            "bot_token": str,
            "bot_id": str,
            "bot_user_id": str,
            "bot_scopes": str,  # comma-separated, as Slack gives them
            "bot_refresh_token": str,
            "bot_token_expires_at": int,  # unix seconds; null unless the app rotates tokens
            "installer": str,  # the user who installed it
            "user_token": str,
            "user_scopes": str,
            "user_refresh_token": str,
            "user_token_expires_at": int,
            "token_type": str,
            "installed_at": float,  # unix seconds
            "updated_at": str,
        },
        pk=("enterprise_id", "team_id"),
        not_null={"installed_at", "updated_at"},
    )
    # The state of each Add to Slack started and not finished: checked once at the redirect, before it expires.
    db.table("slack_oauth_states").create({"state": str, "expires_at": float}, pk="state", not_null={"expires_at"})
    db.table("slack_oauth_states").create_index(["expires_at"])


def rename_released(db: Database) -> None:
    """Record the migrations a store applied under their released names by their names of today."""
    if not db[migrations.migrations_table].exists():
        return
    for old, new in RELEASED_NAMES.items():
        if old != new:
            db.execute(
                f"update {migrations.migrations_table} set name = ? where migration_set = ? and name = ?",
                [new, migrations.name, old],
            )

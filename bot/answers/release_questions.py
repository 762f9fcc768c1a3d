"""Answers to questions about releases, from the store's mapping of releases to PRs: which release shipped a PR
(or whether one has it), what a release or a span of releases holds, and what merged since the last one.

The first line answers as a teammate would ("Yes: in v0.11.1, published Mar 3.", "Not yet: merged Feb 24, after
v0.11.0; it will be in the next release."); the PRs follow. No model is asked: the mapping is exact.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlite_utils import Database

from bot.answers.answered import Answer, pr_lines
from bot.config import Settings
from bot.messages.blocks import by_area, highlights
from store.model import PullRequest
from store.report.release import ReleaseStatus, release_status
from store.report.release_spans import Span, named_releases, release_span, unreleased
from store.retrieval.choose import choose
from store.retrieval.reading.query import Query
from store.retrieval.reading.releases import ReleaseAsk, TagSaid
from store.tables.prs import get_prs
from store.tables.releases import Release, releases_of, shipped_in
from store.text.prose import join_words, plural
from store.understanding.releases import version_key

# PRs a release's answer shows, picked as a report picks highlights; the rest are counted.
HIGHLIGHTS = 10
# Areas a release's first line counts by name; the rest are counted.
AREAS_NAMED = 4
# Releases named when a tag asked is not one the store knows.
KNOWN_NAMED = 5
# PRs answered one a line: those named by number, and those a topic finds (the best, as search ranks them).
NAMED_ANSWERED = 10
FOUND_ANSWERED = 5


def release_answer(db: Database, settings: Settings, repo: str, asked: Query) -> Answer | None:
    """The answer to what `asked` asks of releases; None when it asks nothing of them."""
    ask = asked.release_ask
    if ask is None:
        return None
    releases = releases_of(db, repo)
    if not releases:
        return _line(f"The store holds no release of {repo} yet: `prdigest ingest` reads them with the PRs.")
    asking = _Asking(db, settings, repo, asked, releases)
    if ask is ReleaseAsk.SHIPPED:
        return asking.shipped()
    if ask is ReleaseAsk.HOLDS:
        return asking.holds()
    return asking.unreleased()


def _line(text: str) -> Answer:
    return Answer(text, [], [])


class _Unknown(Exception):
    """A release asked that the store does not know: the answer is the line saying which it knows."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


@dataclass(frozen=True)
class _Verdict:
    """Where one PR shipped, as a first line says it: "Yes" and "in v0.11.1, published Mar 3"."""

    word: str  # "Yes", "No", "Not yet", "Can't tell"
    what: str

    @property
    def sentence(self) -> str:
        return f"{self.word}: {self.what}."


@dataclass(frozen=True)
class _Asking:
    db: Database
    settings: Settings
    repo: str
    asked: Query
    releases: list[Release]  # the repository's, the last published first

    # ------------------------------------------------------------ which release shipped it

    def shipped(self) -> Answer:
        try:
            target = self._target()
        except _Unknown as unknown:
            return _line(unknown.line)
        if self.asked.numbers:
            numbers = list(self.asked.numbers[:NAMED_ANSWERED])
            found = get_prs(self.db, self.repo, numbers)
        else:
            choice = choose(self.db, self.repo, replace(self.asked, release=None))
            if not choice.answer:
                return _line("No PR in the store answers that, so there is no release to look it up in.")
            numbers = [pr.number for pr in choice.answer[:FOUND_ANSWERED]]
            found = {pr.number: pr for pr in choice.answer[:FOUND_ANSWERED]}
        verdicts = [(number, found.get(number), self._verdict(number, found.get(number), target)) for number in numbers]
        return self._shipped_answer(verdicts, target)

    def _target(self) -> list[Release] | None:
        """The releases asked about (several for a line), or None when the question asks which release."""
        release = self.asked.release
        assert release is not None, "release_ask is set only with a release question"
        if release.tag is not None:
            return self._named(release.tag)
        return [self._latest()] if release.latest else None

    def _named(self, said: TagSaid) -> list[Release]:
        found = named_releases(self.db, self.repo, said.text, said.line)
        if not found:
            raise _Unknown(self._not_known(said))
        return found

    def _latest(self) -> Release:
        """The last full release, as GitHub's "latest"; the last release of any kind when every one is a prerelease."""
        return next((release for release in self.releases if not release.prerelease), self.releases[0])

    def _not_known(self, said: TagSaid) -> str:
        tags = [release.tag for release in self.releases]
        shown = tags[:KNOWN_NAMED]
        more = f" and {len(tags) - len(shown)} more" if len(tags) > len(shown) else ""
        asked = f"{said.text}.x" if said.line else said.text
        known = join_words(shown) if not more else ", ".join(shown) + more
        return (f"The store knows no release {asked} of {self.repo}; it knows {known}"
                " (`/prdigest releases` lists them).")

    def _verdict(self, number: int, pr: PullRequest | None, target: list[Release] | None) -> _Verdict:
        shipped = shipped_in(self.db, self.repo, [number]).get(number, [])
        if pr is None and not shipped:
            return _Verdict("Not known", f"#{number} is not in the store, and no release it has mapped names it")
        if target is None:
            if shipped:
                return _Verdict("Yes", self._shipped_in(shipped))
            assert pr is not None
            return self._not_yet(pr, release_status(self.db, pr))
        return self._in_target(pr, shipped, target)

    def _shipped_in(self, shipped: list[Release]) -> str:
        first = shipped[0]
        said = f"in {self._published(first)}"
        if not first.prerelease:
            return said
        final = next((release for release in shipped if not release.prerelease), None)
        if final is None:
            return f"{said}, a prerelease; in no full release yet"
        return f"{said}, a prerelease; the first full release with it is {self._published(final)}"

    def _not_yet(self, pr: PullRequest, status: ReleaseStatus | None) -> _Verdict:
        if status is None or status.latest is None:
            return _Verdict("Can't tell", "the store knows no release")
        if status.unmapped:
            tags = join_words([release.tag for release in status.unmapped])
            one = len(status.unmapped) == 1
            return _Verdict("Can't tell yet", f"{tags}, published since it merged, {'is' if one else 'are'} not mapped yet;"
                            f" the next `prdigest ingest` maps {'it' if one else 'them'}")
        latest = status.latest
        merged = f"merged {self._day(pr.merged_at)}"
        if pr.merged_at > latest.published_at:
            return _Verdict("Not yet", f"{merged}, after {latest.tag}; it will be in the next release")
        return _Verdict("Not yet", f"{merged}, but {self._aside(latest)} does not have it;"
                        " it will be in the next release")

    def _in_target(self, pr: PullRequest | None, shipped: list[Release], target: list[Release]) -> _Verdict:
        mapped = [release for release in target if release.mapped]
        release = target[0]
        if not mapped:
            return _Verdict("Can't tell", f"{release.tag} came out before the oldest PR in the store, so its PRs are not"
                            f" mapped; `prdigest release-notes {release.tag}` reads them")
        tags = {release.tag for release in mapped}
        having = [one for one in shipped if one.tag in tags]
        if having:
            # Before a full release, only full releases count: v0.11.0 does not repeat what v0.11.0rc1 previewed.
            one = having[0]
            first = next(other for other in shipped if one.prerelease or not other.prerelease)
            if first.tag != one.tag and first.published_at < one.published_at and len(target) == 1:
                return _Verdict("Yes", f"it first shipped in {self._published(first)}, and {one.tag} has it too")
            return _Verdict("Yes", f"in {self._published(one)}")
        last = mapped[0]
        earlier = [one for one in shipped if one.published_at < last.published_at and _not_above(one, last)]
        if earlier:
            return _Verdict("Yes", f"it shipped earlier, in {self._published(earlier[0])}, so {last.tag} has it")
        if shipped:
            return _Verdict("No", f"it first shipped in {self._published(shipped[0])}, after {last.tag}")
        if pr is None:
            return _Verdict("No", "no release the store has mapped names it")
        verdict = self._not_yet(pr, release_status(self.db, pr))
        if verdict.word != "Not yet" or last.tag == self.releases[0].tag:
            return verdict
        # An older release asked: neither it nor any release since has it.
        return _Verdict("No", f"merged {self._day(pr.merged_at)}, and no release has it yet; it will be in the next release")

    def _shipped_answer(self, verdicts: list[tuple[int, PullRequest | None, _Verdict]], target: list[Release] | None) -> Answer:
        prs = [pr for _, pr, _ in verdicts if pr is not None]
        if len(verdicts) == 1:
            _, pr, verdict = verdicts[0]
            lines = [verdict.sentence, *(pr_lines(pr, self.settings) if pr else [])]
            return Answer("\n".join(lines), [pr.number for pr in prs], prs, [pr.number for pr in prs])
        yes = sum(1 for _, _, verdict in verdicts if verdict.word == "Yes")
        where = f"in {target[0].tag}" if target and len(target) == 1 else "released"
        lines = [f"{yes} of these {len(verdicts)} PRs {'is' if yes == 1 else 'are'} {where}:"]
        for number, pr, verdict in verdicts:
            title = f"[#{number}] {pr.title}" if pr else f"#{number}"
            lines.append(f"{title}: {verdict.sentence}")
        return Answer("\n".join(lines), [pr.number for pr in prs], prs, [pr.number for pr in prs])

    # ------------------------------------------------------------ what a release holds

    def holds(self) -> Answer:
        release = self.asked.release
        assert release is not None
        try:
            until = self._last_of(release.tag) if release.tag else self._latest()
            since = self._last_of(release.since) if release.since else None
        except _Unknown as unknown:
            return _line(unknown.line)
        if since is not None and since.published_at >= until.published_at:
            until, since = since, until  # "since v0.11 in v0.10" asks for the span between them
        if since is not None and since.tag == until.tag:
            since = None
        span = release_span(self.db, until, since)
        if not span.numbers and span.unmapped:
            return _line(f"{until.tag} came out before the oldest PR in the store, so its PRs are not mapped;"
                         f" `prdigest release-notes {until.tag}` reads them.")
        return self._listed(list(span.numbers), self._span_words(span, since is not None), self._span_more(span), span.unmapped)

    def _last_of(self, said: TagSaid) -> Release:
        return self._named(said)[0]

    def _span_words(self, span: Span, asked_since: bool) -> str:
        """What the PRs shipped in: "v0.11.0, published Mar 3"; since a release asked, "v0.11.0 (published Mar 3)
        since v0.10.1", or for several releases "v0.11.0 since v0.10.0 (v0.10.1 and v0.11.0)"."""
        if not asked_since or span.since is None:
            return self._published(span.until)
        if len(span.releases) <= 1:
            return f"{self._aside(span.until)} since {span.since.tag}"
        names = join_words([release.tag for release in span.releases])
        return f"{span.until.tag} since {span.since.tag} ({names})"

    def _span_more(self, span: Span) -> str:
        commands = join_words([f"`/prdigest release {release.tag}`" for release in span.releases])
        return f"{commands} {'lists' if len(span.releases) == 1 else 'list'} them by area"

    # ------------------------------------------------------------ what merged since the last release

    def unreleased(self) -> Answer:
        found = unreleased(self.db, self.repo)
        assert found is not None, "release_answer asks only when the store knows a release"
        latest = found.latest
        # Not "since v0.11.0": a PR merged after its cut and before it came out is in no release either.
        words = f"that no release has yet (the last is {self._published(latest)})"
        more = f"`/prdigest {self._since_day(latest)}..today` lists everything merged since it came out"
        if not found.numbers:
            return _line(f"Every PR merged is in a release: the last is {self._published(latest)}."
                         + self._unmapped_note(found.unmapped))
        return self._listed(list(found.numbers), words, more, found.unmapped, merged=True)

    def _since_day(self, release: Release) -> str:
        return release.published_at.astimezone(self.settings.timezone).date().isoformat()

    # ------------------------------------------------------------ a list of a release's PRs

    def _listed(self, numbers: list[int], words: str, more: str, unmapped: Sequence[Release], merged: bool = False) -> Answer:
        """The PRs of a span: counted by area with highlights, or those the question's topic picks among them."""
        found = get_prs(self.db, self.repo, numbers)
        topic = replace(self.asked, release=None, numbers=(), within=tuple(sorted(found)))
        if topic.has_topic or topic.people or topic.paths or topic.time or topic.pr_type or topic.leaves_out:
            choice = choose(self.db, self.repo, topic)
            described = replace(choice.question, within=()).describe().removeprefix("merged").strip()
            what = f"{' ' + described if described else ''} {'merged' if merged else 'shipped in'} {words}"
            lead = f"{choice.total} {choice.question.noun(choice.total)}{what}:" if choice.answer else (
                f"No {choice.question.noun(1)}{what}.")
            return self._answer(lead, choice.answer[:HIGHLIGHTS], choice.total, more, unmapped, grouped=False)
        prs = sorted(found.values(), key=lambda pr: (pr.merged_at, pr.number), reverse=True)
        missing = len(numbers) - len(found)
        counted = f"{plural(len(numbers), 'PR')} {'merged' if merged else 'shipped in'} {words}"
        lacking = f" ({missing} of them not in the store)" if missing else ""
        areas = by_area(prs, self.repo)
        named = [f"{len(group)} in {area}" for area, group in areas[:AREAS_NAMED]]
        if len(areas) > AREAS_NAMED:
            named.append(f"{plural(len(areas) - AREAS_NAMED, 'more area')}")
        lead = f"{counted}{lacking}" + (f": {join_words(named)}." if named else ".")
        shown = prs if len(prs) <= HIGHLIGHTS else highlights(prs, HIGHLIGHTS)
        return self._answer(lead, shown, len(numbers), more, unmapped, grouped=True)

    def _answer(self, lead: str, shown: list[PullRequest], total: int, more: str, unmapped: Sequence[Release],
                grouped: bool) -> Answer:
        lines = [lead + self._unmapped_note(unmapped)]
        if grouped and shown:
            lines.append("Highlights, by area:" if total > len(shown) else "By area:")
            for area, group in by_area(shown, self.repo):
                lines.append(f"{area}:")
                lines.extend(line for pr in group for line in pr_lines(pr, self.settings))
        else:
            lines.extend(line for pr in shown for line in pr_lines(pr, self.settings))
        if total > len(shown) and shown:
            lines.append(f"\u2026and {total - len(shown)} more: {more}.")
        numbers = [pr.number for pr in shown]
        return Answer("\n".join(lines), numbers, shown, numbers)

    def _unmapped_note(self, unmapped: Sequence[Release]) -> str:
        if not unmapped:
            return ""
        tags = join_words([release.tag for release in unmapped])
        return f" ({tags} {'is' if len(unmapped) == 1 else 'are'} not mapped yet, so {'its' if len(unmapped) == 1 else 'their'} PRs are not counted.)"

    # ------------------------------------------------------------ in words

    def _day(self, moment: datetime) -> str:
        """"Mar 3"; with its year when that is not the year of the last release."""
        local = moment.astimezone(self.settings.timezone)
        year = self.releases[0].published_at.astimezone(self.settings.timezone).year
        return f"{local:%b} {local.day}" + (f", {local.year}" if local.year != year else "")

    def _published(self, release: Release) -> str:
        """"v0.11.1, published Mar 3"."""
        return f"{release.tag}, published {self._day(release.published_at)}"

    def _aside(self, release: Release) -> str:
        """"v0.11.1 (published Mar 3)", in a sentence that goes on."""
        return f"{release.tag} (published {self._day(release.published_at)})"


def _not_above(release: Release, than: Release) -> bool:
    """Whether `release` is no higher a version than `than` (tags that are no versions are taken to be)."""
    key, other = version_key(release.tag), version_key(than.tag)
    return key is None or other is None or key <= other

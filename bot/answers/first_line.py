"""The first line of an answer: what was asked, answered in its shape before any PR is listed ("Yes: …", "No: [#N]
removes …", "27 PRs merged …", "[#N] pins X: <its reason>"), in the PRs' own terms, and never more than they say."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.answers.reasons import reason, risk_sentence
from store.model import PullRequest
from store.retrieval.choose import Choice
from store.retrieval.finding.listing import COUNT_CAP
from store.retrieval.reading.form import FIX_WORDS
from store.retrieval.reading.query import BOTS, Doubt, Intent, Order, Person, Query, Relation, Role, Tally
from store.retrieval.subject import a_name, identifiers_unsaid, is_identifier, leaving_out
from store.text.patterns import LazyPattern
from store.text.prose import atoms, join_words, plural, sentence, sentences
from store.understanding.dependencies import moved
from store.understanding.relations import Link, extract_relations, revert_title
from store.understanding.summary.titles import PREFIX, title_sentence, title_tags
from store.understanding.vocabulary import cue


def lead_line(choice: Choice, asked: Query) -> str:
    """The answer to what was asked, in its shape, before any PR is listed; what could not be read trails it."""
    problems = " ".join(f"({sentence(problem)})" for problem in choice.question.problems)
    lead = _lead(_in_the_roles_seen(choice), asked)
    if not problems:
        return lead
    # The answer comes first, then the notes, then what introduces the PRs below.
    answer, nearest, _ = lead.partition(NEAREST)
    if nearest:
        return f"{answer} {problems}{nearest}"
    return f"{lead[:-1]} {problems}:" if lead.endswith(":") else f"{lead} {problems}"


def _in_the_roles_seen(choice: Choice) -> Choice:
    """A person asked about in either role named in the one all their answering PRs show: "merged by mthornbury"
    when each of them merged what they are counted for, not "authored or merged". Of a long set, the PRs it lists
    (its newest) tell."""
    people = choice.question.people
    if not choice.answer or not any(person.role is Role.ANY for person in people):
        return choice
    seen = tuple(_role_seen(person, choice.answer) for person in people)
    return replace(choice, question=replace(choice.question, people=seen))


def _role_seen(person: Person, prs: Sequence[PullRequest]) -> Person:
    login = person.login.lower()
    if person.role is not Role.ANY or login == BOTS:
        return person
    authored = [pr.author.lower() == login for pr in prs]
    merged = [(pr.merged_by or "").lower() == login for pr in prs]
    if not any(authored) and any(merged) and all(a or m for a, m in zip(authored, merged)):
        return replace(person, role=Role.MERGER)
    if any(authored) and not any(merged):
        return replace(person, role=Role.AUTHOR)
    return person


# What introduces the PRs shown when none answers.
NEAREST = " The nearest, which may not answer it:"
# A yes names this many PRs by title; more are counted.
NAMED_IN_A_YES = 2


def _lead(choice: Choice, asked: Query) -> str:
    note = f"{choice.note} " if choice.note else ""
    if not choice.answer:
        if choice.note and not (choice.question.has_filters or choice.question.concepts):
            return choice.note  # asked only about PRs the store does not have
        return note + _nothing_line(choice, asked)
    return note + _answered_line(choice, asked)


def _answered_line(choice: Choice, asked: Query) -> str:
    """The first line when PRs answer, in the shape asked."""
    if asked.intent is Intent.YESNO and asked.relation and choice.question.numbers and not choice.links:
        return _unrelated_line(choice, asked.relation, asked.doubts_revert)
    if choice.tally:
        return _tally_line(choice, asked)
    if asked.intent is Intent.COUNT:
        noun = _RELATION_NOUNS[asked.relation][choice.total != 1] if asked.relation else choice.question.noun(choice.total)
        links = _stated(choice, asked.relation) if asked.relation else _links(choice)
        return f"{_count(choice.total)} {noun} {choice.question.describe()}" + (f": {links}." if links else ".")
    if asked.intent is Intent.WHO:
        return _people(choice, asked) + "."
    if asked.intent is Intent.HOWTO:
        return _how_line(choice)
    if asked.intent is Intent.YESNO:
        return _yes_line(choice, asked)
    return _list_line(choice, asked)


def _links(choice: Choice) -> str:
    """The relations between the PRs shown, as the first line states them: "[#507] reverts [#501]"; one alone with
    the reason its stating PR gives, as "[#53880] fixes a problem from [#39324]" tells nothing of it."""
    if len(choice.links) != 1:
        return "; ".join(link.sentence() for link in choice.links)
    stating = _stating(choice, choice.links[0])
    return choice.links[0].sentence() + ((reason(stating) if stating else None) or "")


def _stating(choice: Choice, link: Link) -> PullRequest | None:
    """The PR shown that states `link`; none for a plain mention, which states no reason."""
    source = link.number if link.outgoing else link.other
    shown = (pr for pr in [*choice.answer, *choice.context] if pr.number == source)
    return next(shown, None) if link.kind != "mentions" else None


def _stated(choice: Choice, relation: Relation, reasons: bool = False) -> str:
    """Each relation the PRs state, "[#507] reverts [#501]", a PR whose other side the store lacks named on its own;
    with `reasons` ("why was #N reverted?", "why was the X upgrade reverted?"), or when there is one, each with the
    reason its stating PR gives."""
    linked = {link.number for link in choice.links}
    alone = [pr for pr in choice.answer if pr.number in choice.stating and pr.number not in linked]
    stated = [(link.sentence(), _stating(choice, link)) for link in choice.links]
    stated += [(_alone(pr, relation), pr) for pr in alone]
    # One relation stated says why as well: "[#53880] fixes a problem from [#39324]" alone tells nothing of it.
    reasons = reasons or len(stated) == 1
    return "; ".join(f"{said}{(reason(pr) if reasons and pr else None) or ''}" for said, pr in stated)


def _alone(pr: PullRequest, relation: Relation) -> str:
    """A PR stating a relation to one the store lacks: by the title it reverted, when it says it."""
    if revert_title(pr.title):
        return f"{_in_its_terms(pr)} (not in the store)"
    return f"[#{pr.number}] {_RELATION_PHRASE[relation]} a PR not in the store"


def _unrelated_line(choice: Choice, relation: Relation, doubts_revert: bool) -> str:
    """A yes/no about a relation of PRs named by number, when nothing in the store states it."""
    named = join_words([f"[#{n}]" for n in choice.question.numbers])
    if doubts_revert:
        return f"Yes: nothing in the store reverts {named}."
    return f"No PR {_RELATION_PHRASE[relation]} {named} in the store."


def _yes_line(choice: Choice, asked: Query) -> str:
    links = _links(choice)
    doubted = _doubted(choice, asked, links)
    if doubted:
        return doubted
    if links:
        return f"Yes: {links}."
    left_out = leaving_out(choice.answer[0], asked.concepts)
    if left_out:
        return f"No: {_in_its_terms(choice.answer[0])}. {left_out}"
    default = _default_line(choice, asked.cues.asks_default_off) if asked.cues.asks_default else None
    if default:
        return default
    # As asked: choosing may have let go of a word to find these PRs.
    unsaid = identifiers_unsaid(choice.answer[:NAMED_IN_A_YES], asked.concepts)
    if unsaid:
        # The nearest PR does not say all that was asked ("mxfp4 on our h100s?" of a Blackwell-only PR): not a yes.
        return f"No: the closest is {_in_its_terms(choice.answer[0])}, and it does not mention {join_words(unsaid, 'or')}."
    if len(choice.answer) <= NAMED_IN_A_YES:
        return "Yes: " + "; ".join(f"[#{pr.number}] {pr.title}" for pr in choice.answer) + "."
    if choice.question.concepts:
        return f"Yes: {_in_its_terms(choice.answer[0])} ({choice.total - 1} more below)."
    return f"Yes: {_count(choice.total)} {choice.question.noun(choice.total)} {choice.question.describe()}."


def _list_line(choice: Choice, asked: Query) -> str:
    """What introduces the PRs listed: the relations they state, the PRs named, the one asked for, or how many."""
    question, described, links = choice.question, choice.question.describe(), _links(choice)
    if asked.relation and choice.whole_set:
        noun = _RELATION_NOUNS[asked.relation][choice.total != 1]
        return f"{_count(choice.total)} {noun} {described}: {_stated(choice, asked.relation)}."
    why = asked.cues.explains or asked.cues.asks_why
    stated = _stated(choice, asked.relation, why) if asked.relation else links
    if stated:
        return sentence(stated)
    if question.numbers:
        told = _told(choice, asked.relation) if asked.relation else ""
        return sentence(told) if told else f"About {join_words([f'[#{n}]' for n in question.numbers])}:"
    order = question.order
    if order and (len(choice.answer) == 1 or order in (Order.LARGEST, Order.GAIN)):  # the largest may be several, as large
        lead = f"{_ORDER_LEAD[order].format(noun=question.noun(len(choice.answer)))} {described}"
        return f"{lead}: {_in_its_terms(choice.answer[0])}." if len(choice.answer) == 1 else f"{lead}:"
    if asked.cues.asks_why and not choice.whole_set:
        top = choice.answer[0]
        return sentence(f"{_in_its_terms(top)}{reason(top) or ''}")
    if asked.about_risks and not choice.whole_set:
        return _risk_line(choice)
    if question.concepts and not choice.whole_set:
        # What the PRs say, not the asker's words back: "[#4311] prepacks int8 weights for the oneDNN matmul:".
        return (_in_its_terms(choice.answer[0]) if choice.total == 1 else _closest_first(choice)) + ":"
    shown = len(choice.answer)
    tail = f"; the {shown} newest:" if choice.whole_set and choice.total > shown else ":"
    return f"{_count(choice.total)} {question.noun(choice.total)} {described}{tail}"


def _risk_line(choice: Choice) -> str:
    """What could go wrong, from the closest PR's own risk: "[#55912] reverts “…”: deployments that … may hit OOM"."""
    top = choice.answer[0]
    risk = risk_sentence(top)
    more = f" ({choice.total - 1} more below)" if choice.total > 1 else ""
    return f"{_in_its_terms(top)}: {_lowered(risk.rstrip('.'))}{more}." if risk else f"{_in_its_terms(top)}{more}:"


def _told(choice: Choice, relation: Relation) -> str:
    """The relation each PR named states of a PR the store lacks, with its reason: "[#56355] reverts #56102 (not in
    the store) because …"."""
    kinds = {kind.value for kind in relation.answering()}
    told = [
        f"[#{pr.number}] {_RELATION_PHRASE[Relation(said.kind)]} #{said.target} (not in the store){reason(pr) or ''}"
        for pr in choice.answer if pr.number in choice.question.numbers
        for said in extract_relations(pr)[:1] if said.kind in kinds
    ]
    return "; ".join(told)


def _closest_first(choice: Choice) -> str:
    """'6 PRs merged in moe, closest first: [#4307] tunes the fused MoE kernel for Blackwell'."""
    question = choice.question
    scope = replace(question, concepts=()).describe()
    return f"{_count(choice.total)} {question.noun(choice.total)} {scope}, closest first: {_in_its_terms(choice.answer[0])}"


def _in_its_terms(pr: PullRequest) -> str:
    """A PR as its title says what it does: '[#4311] prepacks int8 weights for the oneDNN matmul', else its title."""
    said = title_sentence(pr.title)
    if said.startswith(_THIS_PR):
        return f"[#{pr.number}] {said.removeprefix(_THIS_PR).rstrip('.')}"
    return f"[#{pr.number}] \u201c{PREFIX.sub('', pr.title).strip() or pr.title}\u201d"


_THIS_PR = "This PR "


_ORDER_LEAD = {
    Order.FIRST: "The first {noun}", Order.LAST: "The last {noun}", Order.LARGEST: "The largest {noun} (most files changed)",
    Order.GAIN: "The {noun} stating the largest gain",
}


def _doubted(choice: Choice, asked: Query, links: str) -> str | None:
    """The no that answers a doubt: "still crashing?" when a fix merged, "did it stick?" or "is it on now?" when a
    revert did last, "can I still pass --x?" when a PR took it out."""
    version = _version_now(choice, asked)
    if version:
        return version
    # A revert says no to "is it on now?", and a later reland yes; "is it still reverted?" the other way round.
    reverted = _reverted_last(choice)
    if asked.doubts_revert and reverted is not None and reverted != (asked.doubt is Doubt.UNDONE):
        return f"No: {links or _in_its_terms(choice.answer[0])}."
    removal = next((pr for pr in choice.answer[:NAMED_IN_A_YES] if _REMOVAL.search(pr.title)), None)
    if asked.doubt is Doubt.NOW and removal is not None:
        works = _still_works(removal)
        return f"Yes, for now: {_in_its_terms(removal)}; {_lowered(works)}" if works else f"No: {_in_its_terms(removal)}."
    if asked.doubt is not Doubt.PERSISTS:
        return None
    if reverted:
        return f"Yes: {links or _in_its_terms(choice.answer[0])}."  # what dealt with it was reverted
    fixes = [pr for pr in choice.answer if _fixes(pr)]
    if fixes:
        return "No: fixed by " + "; ".join(f"[#{pr.number}] {pr.title}" for pr in fixes[:NAMED_IN_A_YES]) + "."
    # A PR about the very problem doubted, not titled a fix ("moves expert weights on a side stream"), dealt with it.
    return f"No: {_in_its_terms(choice.answer[0])}."


def _default_line(choice: Choice, asked_off: bool = False) -> str | None:
    """"Is it on by default?" answered by the newest PR that says what the default is: its title ("Enable X by
    default", or a revert of one), else a clause of its summary ("it is off by default"), not one about before it.
    "Is it still opt-in?" (`asked_off`) is answered the other way round."""
    for pr in sorted(choice.answer, key=lambda pr: pr.merged_at, reverse=True):
        reverted = revert_title(pr.title)
        title = reverted[0] if reverted else pr.title
        on, off = _DEFAULT_ON_TITLE.search(title), _DEFAULT_OFF_TITLE.search(title)
        if on or off:
            return f"{_yes_or_no((bool(on) != bool(reverted)) != asked_off)}: {_in_its_terms(pr)}."
        said = _default_said(pr)
        if said:
            return f"{_yes_or_no((not _DEFAULT_OFF.search(said)) != asked_off)}: {_in_its_terms(pr)}; {_lowered(said)}."
    return None


def _yes_or_no(yes: bool) -> str:
    return "Yes" if yes else "No"


def _default_said(pr: PullRequest) -> str | None:
    """The clause of a PR's summary that says whether what it adds is on by default."""
    clauses = (clause.strip().rstrip(".") for text in _summary_texts(pr) for said in sentences(text)
               for clause in _CLAUSES.split(said))
    return next((part for part in clauses if (_DEFAULT_OFF.search(part) or _DEFAULT_ON.search(part)) and not _WAS.search(part)), None)


# Where a sentence's clauses part: "…, so it can reduce throughput; it is off by default."
_CLAUSES = LazyPattern(r";\s+|,\s+(?:so|and|but|which)\s+")


def _version_now(choice: Choice, asked: Query) -> str | None:
    """"Are we still on xgrammar 0.1.32?": the newest PR that moves the dependency (a bump, an upgrade, a pin, a cap,
    or a revert of one) says which release we are on."""
    if not asked.versions:
        return None
    for pr in sorted(choice.answer, key=lambda pr: pr.merged_at, reverse=True):
        move = moved(pr.title)
        if move:
            return f"{_yes_or_no(any(move.on(version) for version in asked.versions))}: {_in_its_terms(pr)}."
    return None


def _reverted_last(choice: Choice) -> bool | None:
    """Whether the last of the reverts and relands among the answering PRs is a revert; None when there is neither."""
    reverts = {link.number if link.outgoing else link.other for link in choice.links if link.kind == "reverts"}
    events = [
        (pr.merged_at, pr.number in reverts or revert_title(pr.title) is not None)
        for pr in choice.answer if pr.number in reverts or revert_title(pr.title) or _RELAND.search(pr.title)
    ]
    return max(events)[1] if events else None


def _still_works(pr: PullRequest) -> str | None:
    """The sentence of a renaming or deprecating PR that says the old way still works, if one does."""
    said = (_STILL_WORKS,) if _HARD_REMOVAL.search(pr.title) else (_STILL_WORKS, _WARNS_FOR_NOW)
    return next((part for text in _summary_texts(pr) for part in sentences(text) if any(p.search(part) for p in said)),
                None)


def _summary_texts(pr: PullRequest) -> list[str]:
    """What a PR's summary says, section by section; its description when it has no summary."""
    return [*pr.summary.as_dict().values()] if pr.summary else [pr.body]


def _lowered(part: str) -> str:
    """A sentence to follow a semicolon: "The old name …" as "the old name …", a name such as "FlashInfer" kept."""
    first = part.split(" ", 1)[0]
    return part[0].lower() + part[1:] if first[1:].islower() else part


_REMOVAL, _STILL_WORKS, _RELAND = cue("removal_title"), cue("still_works"), cue("reland_title")
_HARD_REMOVAL, _WARNS_FOR_NOW = cue("hard_removal_title"), cue("warns_for_now")
_DEFAULT_OFF, _DEFAULT_ON, _WAS = cue("default_off"), cue("default_on"), cue("was_before")
_DEFAULT_ON_TITLE, _DEFAULT_OFF_TITLE = cue("default_on_title"), cue("default_off_title")


def _fixes(pr: PullRequest) -> bool:
    return "bugfix" in title_tags(pr.title) or FIX_WORDS.search(pr.title) is not None


_RELATION_NOUNS = {
    Relation.REVERTS: ("revert", "reverts"), Relation.FIXES: ("regression fix", "regression fixes"),
    Relation.FOLLOWS: ("follow-up", "follow-ups"),
}
_RELATION_PHRASE = {Relation.REVERTS: "reverts", Relation.FIXES: "fixes a regression from", Relation.FOLLOWS: "follows up on"}


# A first line that names no identifier names what was looked for in the asker's words when they are this few.
TOPIC_WORDS = 3


# Text that tells how: a flag, an environment variable, code, or a setting with its value.
_HOW = LazyPattern(r"`[^`]+`|--[a-z][\w-]+|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b\w+=\S+")


def _how_line(choice: Choice) -> str:
    """The sentence of the best PR's summary that tells how, with the PR it comes from."""
    pr = choice.answer[0]
    summary = pr.summary
    texts = [summary.what_changed, summary.impact, summary.insights] if summary else []
    asked = {atom for concept in choice.question.concepts for atom in atoms(concept.said)}
    found = [part for text in texts for part in sentences(text)]
    if not found:
        return f"[#{pr.number}] {pr.title}:"
    best = max(found, key=lambda part: (bool(_HOW.search(part)), len(asked & set(atoms(part)))))
    return f"{best} [#{pr.number}]"


def _nothing_line(choice: Choice, asked: Query) -> str:
    """Nothing answers: what was looked for and through, and never that nothing merged when only the words missed."""
    question = choice.question
    nearest = NEAREST if choice.context else ""
    if choice.unsaid:
        return _unsaid_line(question, asked, choice.unsaid_among) + nearest
    if not (question.concepts or question.unknown):
        noun = _RELATION_NOUNS[asked.relation][0] if asked.relation else question.noun(1)
        return f"No {noun} {question.describe()}.{nearest}"
    # Areas named beside words only graded the PRs; the scope is the time, people and paths asked.
    scope = replace(question, concepts=(), unknown=(), areas=()).describe() if question.has_filters else ""
    concepts = question.concepts + question.unknown
    said = [concept.said for concept in concepts]
    named = list(dict.fromkeys(concept.said for concept in concepts if is_identifier(concept) or concept.said_as_name))
    # The names asked ("falcon-h1", not "supported falcon-h1"), else the asker's words when they are few: never a run
    # of words no one would say.
    topic = join_words(named, "or") if named else " ".join(said) if len(said) <= TOPIC_WORDS else ""
    if question.areas and topic:
        topic += " in " + " and ".join(question.areas)  # "mamba" said elsewhere, but not in tpu
    what = f"is about {topic}" if topic else "matches what you describe"
    looked = f"none of the PRs {scope} {what}" if scope not in ("", "merged") else f"no PR in the store {what}"
    return (f"No: {looked}." if asked.intent is Intent.YESNO else sentence(looked)) + nearest


def _unsaid_line(question: Query, asked: Query, among: bool) -> str:
    """What the question is about is said by no PR, or `among` the PRs that say the rest: 'No PR in the store
    mentions mi250.', 'None of the PRs about deepseek mentions v2.'"""
    unsaid = question.unknown or question.concepts
    # What it turns on: the first word no PR says, as asked, and the names among the rest (of no names, each word),
    # each once.
    names = any(a_name(concept) for concept in unsaid)
    named = [unsaid[0].said, *(concept.said for concept in unsaid[1:] if a_name(concept) or not names)]
    said = join_words(list(dict.fromkeys(named)), "or")
    line = f"no PR in the store mentions {said}"
    if among:
        areas = f"{' or '.join(question.areas)} " if question.areas else ""
        about = f" about {join_words([concept.said for concept in question.concepts])}" if question.concepts else ""
        merged = f" merged {question.time.label}" if question.time else ""
        line = f"none of the {areas}PRs{merged}{about} mentions {said}"
    return f"No: {line}." if asked.intent is Intent.YESNO else sentence(line)


def _tally_line(choice: Choice, asked: Query) -> str:
    """'DarkLight1337 merged the most PRs on Mon Feb 9 (6), then vllm-bot (5) and mgoin (3).'"""
    count = choice.tally[0][1]
    leaders = [key for key, n in choice.tally if n == count]
    others = join_words([f"{key} ({n})" for key, n in choice.tally[len(leaders) :]])
    scope = choice.question.describe().removeprefix("merged").strip()
    scope = f" {scope}" if scope else ""
    if asked.tally is Tally.AREA:
        said = f"{join_words(leaders)} {'was the busiest area' if len(leaders) == 1 else 'were the busiest areas'}"
        return f"{said}{scope} ({plural(count, 'PR')})" + (f", then {others}." if others else ".")
    verb = "merged" if asked.tally is Tally.MERGER else "authored"
    tied = " (tied)" if len(leaders) > 1 else ""
    return f"{join_words(leaders)} {verb} the most {choice.question.noun(many=True)}{scope}{tied} ({count})" + (
        f", then {others}." if others else "."
    )


def _count(total: int) -> str:
    return f"{total}+" if total >= COUNT_CAP else str(total)


def _people(choice: Choice, asked: Query) -> str:
    """'ywang96 ([#34183]) and mgoin ([#34530], [#33936])': who did it, with their PRs."""
    mergers = choice.question.cues.names_mergers
    # Who reverted or fixed: choose kept the stating side. Who broke it: the fix is cited beside the culprit,
    # but only the culprit's people are named.
    # Who wrote the original: the PRs a revert or a reland names, not the revert's or the reland's own.
    culprits = {link.other for link in choice.links} if asked.culprit or asked.cues.original else set()
    people: dict[str, list[int]] = {}
    for pr in [pr for pr in choice.answer if pr.number in culprits] or choice.answer:
        person = (pr.merged_by or pr.author) if mergers else pr.author
        people.setdefault(person, []).append(pr.number)
    return join_words([f"{person} ({', '.join(f'[#{n}]' for n in numbers)})" for person, numbers in people.items()])

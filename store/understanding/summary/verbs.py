"""English verbs as PR titles and change lists use them: "Fix", "Fixes", "Fixed", "Fixing" -> "fixes".

A stemmer was tried and left out: it maps "optimizes" to "optim", a stem, while a
summary needs the base verb back ("optimize") and its third person ("optimizes").
A closed list of the verbs PRs start with does both and never mistakes a noun
("Fix for the crash", "Update") for an action.
"""
from __future__ import annotations

from store.text.patterns import LazyPattern

# Imperative verbs PR titles and change lists start with; anything else is treated as a noun phrase.
VERBS = frozenset(
    ["abort", "accept", "add", "adjust", "adopt", "align", "allocate", "allow", "apply", "avoid", "batch", "block", "bound", "build", "bump", "bypass", "cache", "call", "cap", "change", "check", "clamp", "clarify", "clean", "cleanup", "compute", "configure", "consolidate", "convert", "correct", "count", "cover", "bring", "let", "try", "mirror", "honor", "honour", "test", "create", "customize", "decode", "decouple", "dedupe", "deduplicate", "default", "defer", "delete", "deprecate", "detect", "disable", "document", "downgrade", "drain", "drop", "dump", "emit", "enable", "encode", "enforce", "ensure", "escape", "evict", "exclude", "expand", "explain", "expose", "extend", "extract", "fetch", "filter", "fix", "flatten", "flush", "format", "forward", "free", "fuse", "gate", "gather", "generalize", "guard", "handle", "harden", "hide", "hoist", "ignore", "implement", "import", "improve", "include", "increase", "infer", "initialize", "inline", "instantiate", "integrate", "introduce", "invalidate", "isolate", "keep", "land", "launch", "limit", "load", "log", "lower", "make", "map", "mark", "measure", "migrate", "monitor", "move", "normalize", "offload", "optimize", "overlap", "override", "pack", "pad", "parse", "pass", "patch", "pick", "pin", "plumb", "polish", "populate", "port", "prefer", "prefetch", "prepack", "preprocess", "preserve", "prevent", "print", "profile", "propagate", "prune", "quantize", "raise", "read", "record", "reduce", "refactor", "refine", "refresh", "register", "reject", "relax", "release", "reland", "reload", "relocate", "remap", "remove", "rename", "render", "reorder", "reorganize", "replace", "replay", "report", "reset", "reshape", "resize", "resolve", "respect", "restore", "restrict", "retain", "retry", "return", "reuse", "revert", "rework", "rewrite", "route", "run", "sample", "save", "scale", "schedule", "select", "send", "serve", "set", "shard", "share", "show", "silence", "simplify", "skip", "slice", "sort", "spawn", "speed", "split", "standardize", "start", "stop", "store", "stream", "streamline", "submit", "support", "swap", "switch", "sync", "tidy", "toggle", "track", "trigger", "trim", "truncate", "tune", "turn", "tweak", "unblock", "unify", "unpin", "unskip", "unwrap", "update", "upgrade", "upload", "use", "validate", "vectorize", "verify", "wait", "warn", "wire", "wrap", "write"]
)
# Adverbs that sit before a title's verb: "Properly propagate X".
_ADVERBS = frozenset(
    ["properly", "correctly", "explicitly", "always", "only", "also", "further", "partially", "fully", "temporarily", "automatically", "consistently", "safely", "lazily", "eagerly", "gracefully", "actually", "finally"]
)
# "Fix X and add Y": the second verb agrees as well.
_AND_VERB = LazyPattern(r"(\b(?:and|,)\s+)([A-Za-z]+)\b")
_VOWELS = "aeiou"


def third_person(verb: str) -> str:
    """ "fix" -> "fixes", "apply" -> "applies", "add" -> "adds"."""
    if verb.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in _VOWELS:
        return verb[:-1] + "ies"
    return verb + "s"


def gerund(verb: str) -> str:
    """ "crash" -> "crashing", "use" -> "using", "set" -> "setting"."""
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith("ee"):
        return verb[:-1] + "ing"
    short = len(verb) <= 4 and verb[-1] not in _VOWELS + "wxy" and verb[-2] in _VOWELS and verb[-3:-2] not in _VOWELS
    return verb + verb[-1] + "ing" if short else verb + "ing"


def base_verb(word: str) -> str | None:
    """The verb a title or sentence starts with, in its base form: "Add", "Adds", "Added", "Adding" -> "add"."""
    word = word.lower()
    if word in VERBS:
        return word
    candidates: tuple[str, ...] = ()
    if word.endswith("ing"):
        candidates = (word[:-3], word[:-3] + "e", word[:-4])
    elif word.endswith("ed"):
        candidates = (word[:-2], word[:-1], word[:-3] + "y", word[:-3])
    elif word.endswith("s"):
        candidates = (word[:-1], word[:-2], word[:-3] + "y")
    return next((candidate for candidate in candidates if candidate in VERBS), None)


def action(text: str) -> str | None:
    """ "Optimize X" -> "optimizes X"; None when the text does not start with a known verb."""
    words = text.split(" ", 1)
    adverb = ""
    if len(words) > 1 and words[0].lower() in _ADVERBS:
        adverb = words[0].lower() + " "
        words = words[1].split(" ", 1)
    verb = base_verb(words[0])
    if verb is None:
        return None
    tail = _AND_VERB.sub(
        lambda m: m.group(1) + third_person(m.group(2).lower()) if m.group(2).lower() in VERBS else m.group(0),
        words[1] if len(words) > 1 else "",
    )
    if verb == "support":
        return f"{adverb}adds support for {tail}"
    if verb == "cleanup":
        return f"{adverb}cleans up {tail}"
    return f"{adverb}{third_person(verb)} {tail}".strip()

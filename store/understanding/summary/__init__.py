"""Summaries and types written without a model, from a PR's title, description, files and areas.

body (a description's structure), wording (sentences a teammate would write), verbs and titles
(titles as clauses), components (vLLM's layout named), kind (trivial or substantial), signals
(risks the data supports) and sections (the four section writers). What most users meet first,
so nothing is claimed that the PR data does not show.

May import store.text, store.model and store.understanding (areas, paths).
"""
from store.understanding.summary.body import clean_body
from store.understanding.summary.kind import classify_type, trivial_reason
from store.understanding.summary.sections import extractive_summary
from store.understanding.summary.titles import is_revert, title_sentence

__all__ = ["classify_type", "clean_body", "extractive_summary", "is_revert", "title_sentence", "trivial_reason"]

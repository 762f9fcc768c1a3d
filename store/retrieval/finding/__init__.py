"""How search finds the PRs a question asks about: the store lookups the reader asks, the SQL conditions of its
filters, listings by time and people, bm25 ranking within recent windows, and grading by what each PR says.

store.retrieval.search runs these in order; choosing reads the hits they give.
"""

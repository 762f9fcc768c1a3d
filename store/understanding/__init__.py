"""Understanding a PR's text: its areas, what its changed files are, how it refers to other PRs, and summaries without a model.

May import store.text, store.days and store.model.
"""

"""Answering questions from the store: reading a question once into a Query (reading/), finding the PRs it asks
about (search.py, with finding/), choosing what to cite (choose.py), and reading a follow-up against the turns
of its thread (thread.py).

May import store.tables, store.migrations (the index's columns) and below.
"""

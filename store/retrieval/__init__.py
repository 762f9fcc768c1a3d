"""Answering questions from the store: reading a question, searching the full-text index, choosing what to cite.

May import store.tables, store.migrations (the index's columns) and below.
"""

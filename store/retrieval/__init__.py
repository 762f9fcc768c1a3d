"""Retrieval: reading a question, finding the PRs it is about, and choosing those that answer it."""

"""Where PRs come from: GitHub's API, and report files imported from disk.

May import every other part of store.
"""

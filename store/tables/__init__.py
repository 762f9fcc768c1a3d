"""The store's rows: PRs, summaries, posts, subscriptions, live alerts, thread turns, the model-call ledger
and the signatures of signed Slack requests already handled.

May import store.db, store.understanding and below.
"""

"""The store's rows: PRs, summaries, posts, subscriptions, live alerts, thread turns and the model-call ledger.

May import store.db, store.understanding and below.
"""

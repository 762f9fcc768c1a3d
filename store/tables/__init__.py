"""The store's rows: PRs, summaries, posts, subscriptions, people, live alerts, thread turns and the model-call ledger.

May import store.db, store.subscription and below.
"""

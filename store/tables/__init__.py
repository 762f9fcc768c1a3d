"""The store's rows: PRs, summaries, posts, subscriptions, people, live alerts, thread turns, the model-call
ledger and the signatures of signed Slack requests already handled.

May import store.db, store.subscription and below.
"""

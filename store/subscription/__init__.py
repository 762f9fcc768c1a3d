"""What a subscription follows and when: its filter of merged PRs, and its cadence.

May import store.understanding and below.
"""

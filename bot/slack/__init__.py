"""Slack: the bolt app over Socket Mode or HTTP, mentions, daily threads, live alerts and the scheduler.

May import every other part of bot except bot.cli.
"""

"""The terminal: the local shell, mrkdwn rendered for a terminal, and ingest progress.

May import bot.answers and what it may import; never bot.slack.
"""

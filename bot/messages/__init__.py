"""Slack messages: escaping untrusted text into mrkdwn, and the blocks of reports, PR lists and summaries.

May import store only. Every reply, in Slack or on a terminal, is one of these messages.
"""

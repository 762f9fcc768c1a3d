"""Answers: slash commands, @-questions, which repositories they cover, and the text that answers.

Shared by Slack and the terminal. May import bot.config, bot.runtime, bot.model, bot.messages and store.
"""

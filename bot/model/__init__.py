"""The model: the OpenAI-compatible client, its prompts, reading its replies, summaries and their cost.

May import bot.config and store; nothing else of bot.
"""

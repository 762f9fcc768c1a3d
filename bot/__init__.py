"""The people side: Slack, the terminal, the model, and the answers they share.

Imports run one way, bot -> store. Inside bot, lower layers never import higher ones:
config -> model -> runtime, ingest -> messages -> answers -> terminal -> slack -> doctor -> cli.
"""

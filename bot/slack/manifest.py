"""The bot scopes manifest.yml asks for, shipped with prdigest (the manifest itself is not package data):
`prdigest doctor` compares them with the scopes Slack granted the token. A test keeps the two lists equal."""
from __future__ import annotations

BOT_SCOPES = (
    "app_mentions:read", "chat:write", "chat:write.public", "commands", "channels:history", "groups:history",
    "im:write", "im:history", "links:read", "links:write",
)

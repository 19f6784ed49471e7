"""The bus: settings, events, streams, spool and the stores that live on Redis.

Imports neither worker nor bot.
"""

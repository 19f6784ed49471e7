"""The forum's topics: which topics show an event, in which style, and which must be created first
(`routing`, pure), and the registry of which topic is which project, task, agent or merge, kept in Redis
(`topics`).

May import render, errors and bus.
"""

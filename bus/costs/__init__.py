"""What agents spend, as values: model prices, the tokens of each answer (`usage`), budgets, the `ib cost`
report, and when a plan's usage limit resets (`usage_limits`). Pure; their stores are in bus.stores.

May import wire, poll and errors. `prices` imports nothing, so the Stop hook can price a turn.
"""

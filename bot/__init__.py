"""Everything Telegram: the bot routes bus events into forum topics and relays replies through the bus."""

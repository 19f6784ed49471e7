"""The settings: the one settings class (`settings`), the light reading of the few the hot paths need
(`hotconf`, `defaults`, `setting_checks`), the one reader of the files a person writes them into
(`settings_file`, `dotenv_file`), what some of them name (`permission_modes`, `repo_paths`, `relay_port`),
and the checks of the bot's token file and its Telegram settings (`secret_file`, `telegram_setup`).

May import costs, wire, poll and errors. `hotconf` and the modules it reads are on the hooks' path, without
pydantic; `settings` is the pydantic-settings class the rest of the product builds once.
"""

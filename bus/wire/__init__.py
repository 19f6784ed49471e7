"""The wire to Redis and the names on it: where a Redis listens (`address`), the light client (`resp`), JSON
through the C accelerator (`fastjson`), every key and stream name (`keys`), the text of the Lua scripts in
bus/lua (`lua_source`), plain records for the hot paths (`record`), and the rules for ids and names that go
into keys (`ids`, `names`).

May import poll and errors only. All but `ids` (which compiles its rule with `re`) are light enough for the
hooks: stdlib only, no `re`, no `typing`.
"""

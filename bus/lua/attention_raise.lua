-- An attention item opens once per event, and once per agent and kind while open (bus/inbox/attention.py).
-- KEYS[1] the item's hash, KEYS[2] open items by raise time (zset), KEYS[3] slot -> open item (hash)
-- ARGV[1] item id, ARGV[2] its slot (agent|kind), ARGV[3] raise time (ms), ARGV[4..] the item's fields,
-- as pairs. An answered item is kept a day (attention_answer.lua), so a late copy of its event opens nothing.
-- Returns {1, id} for a new item, {0, id} for the open item it joins or the one it already made.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, ARGV[1]}
end
local open = redis.call('HGET', KEYS[3], ARGV[2])
if open then
  return {0, open}
end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[1])
return {1, ARGV[1]}

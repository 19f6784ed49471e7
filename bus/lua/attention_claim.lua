-- Take one delivery of an open attention item: to one target in one round (bot/attention/escalation.py).
-- KEYS[1] open items (zset), KEYS[2] the item's delivered targets (hash), KEYS[3] its leases (hash)
-- ARGV[1] item id, ARGV[2] target, ARGV[3] lease (ms): a taker that dies mid-send leaves it to expire
-- Returns 1 when the caller must send now; 0 when the item is answered, the target was delivered, or
-- another taker holds it. Checked and taken in one step: nothing is taken after the answer.
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return 0 end
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local held = tonumber(redis.call('HGET', KEYS[3], ARGV[2]) or '0')
if held > ms then return 0 end
redis.call('HSET', KEYS[3], ARGV[2], ms + tonumber(ARGV[3]))
return 1

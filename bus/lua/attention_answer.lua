-- Close an agent's open attention items: answered by a person, or the agent moved on (bus/inbox/attention.py).
-- KEYS[1] open items by raise time (zset), KEYS[2] slot -> open item (hash)
-- ARGV[1] the prefix of an item's key (the id follows), ARGV[2] the agent, ARGV[3] a stream id: only
-- items raised by an earlier event close ("": all of them), ARGV[4] who answered, ARGV[5] TTL of a
-- closed item (seconds), ARGV[6..] the kinds
-- Returns the ids closed. The first answer wins: a second finds nothing open.
local function before(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  if not am or not bm then return true end
  if tonumber(am) ~= tonumber(bm) then return tonumber(am) < tonumber(bm) end
  return tonumber(as) < tonumber(bs)
end
local now = redis.call('TIME')
local at = string.format('%d.%06d', now[1], now[2])
local closed = {}
for i = 6, #ARGV do
  local slot = ARGV[2] .. '|' .. ARGV[i]
  local id = redis.call('HGET', KEYS[2], slot)
  if id then
    local key = ARGV[1] .. id
    local event = redis.call('HGET', key, 'event') or ''
    if ARGV[3] == '' or before(event, ARGV[3]) then
      redis.call('HSET', key, 'answered_at', at, 'answered_by', ARGV[4])
      redis.call('EXPIRE', key, ARGV[5])
      redis.call('EXPIRE', key .. ':sent', ARGV[5])
      redis.call('DEL', key .. ':lease')
      redis.call('ZREM', KEYS[1], id)
      redis.call('HDEL', KEYS[2], slot)
      table.insert(closed, id)
    end
  end
end
return closed

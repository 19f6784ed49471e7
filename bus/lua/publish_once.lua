-- Publish one event at most once, whoever sends it (first try, retry, spool flush).
-- KEYS[1] events stream, KEYS[2] this event's mark (by its client-made id)
-- ARGV[1] approximate MAXLEN, ARGV[2] the envelope JSON, ARGV[3] mark TTL in seconds
-- Returns {stream id, 1} when appended now, {what the mark holds, 0} when it was published before.
local first = redis.call('GET', KEYS[2])
if first then
  return {first, 0}
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'e', ARGV[2])
redis.call('SET', KEYS[2], id, 'EX', ARGV[3])
return {id, 1}

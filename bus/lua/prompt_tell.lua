-- Record an agent's open dialog only if its record is still the one the caller read (compare and set).
-- The pane watcher and the agent's hook may tell one dialog at the same instant: whichever sets it first
-- publishes it, the other reads the record again and adopts it (bus/inbox/prompt_record.py).
-- KEYS[1] the agent's prompt (hash)   KEYS[2] the open questions (zset)
-- ARGV[1] the id the caller read ("" for none)   ARGV[2] "record" (replaces it) or "add" (adds fields to it)
-- ARGV[3] a question's key without its id   ARGV[4] the record's TTL (seconds)   ARGV[5..] fields, as pairs
-- Returns {1, id read} when set now, {0, id found instead} ("" for none) when another got there first.
local found = redis.call('HGET', KEYS[1], 'id') or ''
if found ~= ARGV[1] then
  return {0, found}
end
if ARGV[2] == 'record' then
  local question = redis.call('HGET', KEYS[1], 'question_id')
  if question and question ~= '' then  -- the dialog it replaces is over: so is the question it opened
    redis.call('DEL', ARGV[3] .. question)
    redis.call('ZREM', KEYS[2], question)
  end
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
redis.call('EXPIRE', KEYS[1], ARGV[4])
return {1, found}

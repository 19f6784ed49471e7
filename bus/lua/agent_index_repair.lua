-- One worker's agent index made to agree with the records: an id whose record is gone or names another
-- worker leaves it, an agent whose record names this worker and that it lacks joins it. Reads every
-- agent's `worker` field (one HGET each, here in Redis): run at a worker's start and now and then.
--   KEYS[1] agents (set)  KEYS[2] the worker's index
--   ARGV[1] agent key template ("\1" where the id goes)  ARGV[2] the worker
-- Returns {ids added, ids dropped}.
local AGENTS, INDEX = KEYS[1], KEYS[2]
local AGENT, WORKER = ARGV[1], ARGV[2]

local function key(tmpl, id)
  local at = string.find(tmpl, "\1", 1, true)
  return string.sub(tmpl, 1, at - 1) .. id .. string.sub(tmpl, at + 1)
end

local added, dropped = {}, {}
for _, id in ipairs(redis.call("SMEMBERS", INDEX)) do
  local owner = redis.call("HGET", key(AGENT, id), "worker")
  if owner ~= WORKER or redis.call("SISMEMBER", AGENTS, id) == 0 then
    redis.call("SREM", INDEX, id)
    dropped[#dropped + 1] = id
  end
end
for _, id in ipairs(redis.call("SMEMBERS", AGENTS)) do
  if redis.call("HGET", key(AGENT, id), "worker") == WORKER and redis.call("SISMEMBER", INDEX, id) == 0 then
    redis.call("SADD", INDEX, id)
    added[#added + 1] = id
  end
end
return {added, dropped}

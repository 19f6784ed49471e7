-- Bus data from before the per-worker agent indexes: each agent of `agents` goes into the index of the
-- worker its record names, once, and the mark says it was done (a second call does nothing).
--   KEYS[1] agents (set)  KEYS[2] the mark (agent-index)
--   ARGV[1] agent key template  ARGV[2] index key template ("\1" where the id / worker goes)
-- Returns the number of agents indexed, or -1 when the indexes were built already.
local AGENTS, MARK = KEYS[1], KEYS[2]
local AGENT, INDEX = ARGV[1], ARGV[2]

local function key(tmpl, id)
  local at = string.find(tmpl, "\1", 1, true)
  return string.sub(tmpl, 1, at - 1) .. id .. string.sub(tmpl, at + 1)
end

if redis.call("EXISTS", MARK) == 1 then return -1 end
local n = 0
for _, id in ipairs(redis.call("SMEMBERS", AGENTS)) do
  local worker = redis.call("HGET", key(AGENT, id), "worker")
  if worker and worker ~= "" then
    redis.call("SADD", key(INDEX, worker), id)
    n = n + 1
  end
end
redis.call("SET", MARK, "1")
return n

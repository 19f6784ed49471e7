-- An agent's record deleted with its id out of its worker's index and out of `agents`, in one step.
--   KEYS[1] the agent's hash  KEYS[2] agents (set)
--   ARGV[1] index key template ("\1" where the worker goes)  ARGV[2] the agent's id
local AGENT, AGENTS = KEYS[1], KEYS[2]
local INDEX, ID = ARGV[1], ARGV[2]

local function key(tmpl, id)
  local at = string.find(tmpl, "\1", 1, true)
  return string.sub(tmpl, 1, at - 1) .. id .. string.sub(tmpl, at + 1)
end

local worker = redis.call("HGET", AGENT, "worker")
if worker and worker ~= "" then redis.call("SREM", key(INDEX, worker), ID) end
redis.call("SREM", AGENTS, ID)
return redis.call("DEL", AGENT)

-- An agent's record written with its worker's index (`worker-agents:<worker>`) in one step: the record
-- gets the fields, and when it names a worker other than the one it had, the id moves from the old
-- worker's index to the new one's. A save (ARGV[4] = "1") also makes the record lasting (a reservation
-- expires) and lists the id in `agents`.
--   KEYS[1] the agent's hash  KEYS[2] agents (set)
--   ARGV[1] index key template ("\1" where the worker goes)  ARGV[2] the agent's id
--   ARGV[3] its worker ("" leaves the index as it is)  ARGV[4] "1" for a save  ARGV[5..] field, value, ...
local AGENT, AGENTS = KEYS[1], KEYS[2]
local INDEX, ID, WORKER, SAVE = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local function key(tmpl, id)
  local at = string.find(tmpl, "\1", 1, true)
  return string.sub(tmpl, 1, at - 1) .. id .. string.sub(tmpl, at + 1)
end

local before = redis.call("HGET", AGENT, "worker")
if #ARGV > 4 then redis.call("HSET", AGENT, unpack(ARGV, 5)) end
if SAVE == "1" then
  redis.call("PERSIST", AGENT)
  redis.call("SADD", AGENTS, ID)
end
if WORKER ~= "" then
  if before and before ~= "" and before ~= WORKER then redis.call("SREM", key(INDEX, before), ID) end
  redis.call("SADD", key(INDEX, WORKER), ID)
end
return before or ""

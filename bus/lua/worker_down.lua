-- Sweep: every worker of the `workers` set whose heartbeat expired is marked down once, and each of its
-- agents becomes `unreachable` (its state before is kept in `reachable_state`) with a `state` event.
-- One script, so a worker that renews its heartbeat meanwhile is never half marked, and several sweepers
-- (the other workers, the bot) publish each change once. It reads the gone workers' agent indexes
-- (`worker-agents:<worker>`), not every agent of the bus; on bus data from before the indexes (no mark),
-- `agents`.
--   KEYS[1] workers (set)  KEYS[2] workers down (set)  KEYS[3] agents (set)  KEYS[4] events stream
--   KEYS[5] the agent index mark
--   ARGV[1] heartbeat key template  ARGV[2] agent key template ("\1" where the id goes)
--   ARGV[3] events MAXLEN  ARGV[4] the envelope's ts  ARGV[5] agent index key template
-- Returns the workers marked down by this call.
local WORKERS, DOWN, AGENTS, EVENTS, MARK = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local HEARTBEAT, AGENT, MAXLEN, TS, INDEX = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

local function key(tmpl, id)
  local at = string.find(tmpl, "\1", 1, true)
  return string.sub(tmpl, 1, at - 1) .. id .. string.sub(tmpl, at + 1)
end

local gone, is_gone = {}, {}
for _, w in ipairs(redis.call("SMEMBERS", WORKERS)) do
  if redis.call("EXISTS", key(HEARTBEAT, w)) == 0 and redis.call("SADD", DOWN, w) == 1 then
    gone[#gone + 1] = w
    is_gone[w] = true
  end
end
if #gone == 0 then return gone end

local ids = {}
if redis.call("EXISTS", MARK) == 1 then
  for _, w in ipairs(gone) do
    for _, id in ipairs(redis.call("SMEMBERS", key(INDEX, w))) do ids[#ids + 1] = id end
  end
else
  ids = redis.call("SMEMBERS", AGENTS)
end

local now = redis.call("TIME")[1]
for _, id in ipairs(ids) do
  local k = key(AGENT, id)
  local f = redis.call("HMGET", k, "worker", "state", "project", "task")
  if f[1] and is_gone[f[1]] and f[2] ~= "unreachable" then
    local before = f[2] or "unknown"
    redis.call("HSET", k, "state", "unreachable", "state_at", now, "reachable_state", before)
    local body = cjson.encode({ts = TS, type = "state", from = id, agent = id,
      project = (f[3] ~= "" and f[3]) or cjson.null, task = (f[4] ~= "" and f[4]) or cjson.null,
      msg = id .. ": " .. before .. " \226\134\146 unreachable (worker " .. f[1] .. " stopped answering)",
      data = {from_state = before, to_state = "unreachable", worker = f[1]}})
    redis.call("XADD", EVENTS, "MAXLEN", "~", MAXLEN, "*", "e", body)
  end
end
return gone

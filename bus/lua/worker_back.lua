-- A worker that was marked down is back: it leaves the down set, and every agent of its own that was
-- `unreachable` gets back the state it had (`reachable_state`), with a `state` event. It reads the worker's
-- agent index, not every agent of the bus; on bus data from before the indexes (no mark), `agents`.
--   KEYS[1] workers down (set)  KEYS[2] agents (set)  KEYS[3] events stream  KEYS[4] the agent index mark
--   KEYS[5] the worker's agent index
--   ARGV[1] agent key template  ARGV[2] events MAXLEN  ARGV[3] the envelope's ts  ARGV[4] the worker
-- Returns the ids of the agents that came back.
local DOWN, AGENTS, EVENTS, MARK, INDEX = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local AGENT, MAXLEN, TS, WORKER = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local function key(tmpl, id)
  local at = string.find(tmpl, "\1", 1, true)
  return string.sub(tmpl, 1, at - 1) .. id .. string.sub(tmpl, at + 1)
end

redis.call("SREM", DOWN, WORKER)
local back = {}
local now = redis.call("TIME")[1]
local ids = redis.call("SMEMBERS", (redis.call("EXISTS", MARK) == 1 and INDEX) or AGENTS)
for _, id in ipairs(ids) do
  local k = key(AGENT, id)
  local f = redis.call("HMGET", k, "worker", "state", "project", "task", "reachable_state")
  if f[1] == WORKER and f[2] == "unreachable" then
    local after = f[5] or "unknown"
    redis.call("HSET", k, "state", after, "state_at", now)
    redis.call("HDEL", k, "reachable_state")
    local body = cjson.encode({ts = TS, type = "state", from = id, agent = id,
      project = (f[3] ~= "" and f[3]) or cjson.null, task = (f[4] ~= "" and f[4]) or cjson.null,
      msg = id .. ": unreachable \226\134\146 " .. after .. " (worker " .. WORKER .. " is back)",
      data = {from_state = "unreachable", to_state = after, worker = WORKER}})
    redis.call("XADD", EVENTS, "MAXLEN", "~", MAXLEN, "*", "e", body)
    back[#back + 1] = id
  end
end
return back

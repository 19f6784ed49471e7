-- Claim the next ready task of a project, or one given task. KEYS[5] the project's ready queue.
-- arg: 1 agent, 2 (optional) the one task wanted. Returns the claimed task read back in the same round
-- trip — {id, its hash as a flat field/value list, its dependency ids, its notes} — or false when
-- nothing is ready (or the task wanted is not). The queue's order (see ready_score) makes this highest
-- priority first, then oldest; one script runs at a time, so a task is never handed to two claimers.
local agent, wanted = arg(1), arg(2)
local id
if wanted and wanted ~= "" then
  if field(wanted, "status") ~= "ready" or redis.call("ZREM", KEYS[5], wanted) == 0 then return false end
  id = wanted
else
  repeat
    local popped = redis.call("ZPOPMIN", KEYS[5])
    if #popped == 0 then return false end
    if field(popped[1], "status") == "ready" then id = popped[1] end
  until id
end

local hash = key("task", id)
local attempt = redis.call("HINCRBY", hash, "attempt", 1)
redis.call("HSET", hash, "status", "claimed", "claimed_by", agent, "claimed_at", NOW_MS)
redis.call("ZADD", CLAIMS, NOW_MS, id)

-- Context from the dependencies: their own result, observation and handoff notes, copied with
-- source_task set. Copies from an earlier claim are replaced, so a retry sees them once, up to date.
local wanted = {result = true, observation = true, handoff = true}
local inherited = {}
for _, dep in ipairs(redis.call("SORT", key("deps", id), "ALPHA")) do
  for _, raw in ipairs(redis.call("LRANGE", key("notes", dep), 0, -1)) do
    local note = cjson.decode(raw)
    if note.source_task == dep and wanted[note.kind] then inherited[#inherited + 1] = raw end
  end
end
local notes_key = key("notes", id)
local own = {}
for _, raw in ipairs(redis.call("LRANGE", notes_key, 0, -1)) do
  if cjson.decode(raw).source_task == id then own[#own + 1] = raw end
end
if #inherited > 0 or redis.call("LLEN", notes_key) ~= #own then
  redis.call("DEL", notes_key)
  for _, raw in ipairs(inherited) do redis.call("RPUSH", notes_key, raw) end
  for _, raw in ipairs(own) do redis.call("RPUSH", notes_key, raw) end
end

local max_attempts = tonumber(field(id, "max_attempts"))
emit("task_claimed", agent, field(id, "project"), agent, id, id .. " claimed by " .. agent,
  jobj({"title", J(field(id, "title")), "priority", J(tonumber(field(id, "priority"))),
    "attempt", J(attempt), "max_attempts", J(max_attempts)}))
return {id, redis.call("HGETALL", hash), redis.call("SMEMBERS", key("deps", id)),
  redis.call("LRANGE", notes_key, 0, -1)}

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
local deps = redis.call("SMEMBERS", key("deps", id))
local inherited = {}
if #deps > 0 then
  local kinds = {result = true, observation = true, handoff = true}
  table.sort(deps)
  for _, dep in ipairs(deps) do
    for _, raw in ipairs(redis.call("LRANGE", key("notes", dep), 0, -1)) do
      local note = cjson.decode(raw)
      if note.source_task == dep and kinds[note.kind] then inherited[#inherited + 1] = raw end
    end
  end
end
local notes_key = key("notes", id)
local notes = redis.call("LRANGE", notes_key, 0, -1)
local own = {}
for _, raw in ipairs(notes) do
  if cjson.decode(raw).source_task == id then own[#own + 1] = raw end
end
if #inherited > 0 or #notes ~= #own then
  redis.call("DEL", notes_key)
  notes = {}
  for _, raw in ipairs(inherited) do notes[#notes + 1] = raw end
  for _, raw in ipairs(own) do notes[#notes + 1] = raw end
  if #notes > 0 then redis.call("RPUSH", notes_key, unpack(notes)) end
end

-- The task as it is now, read once: for the event and for the reply (no second round trip).
local flat = redis.call("HGETALL", hash)
local t = {}
for i = 1, #flat, 2 do t[flat[i]] = flat[i + 1] end
emit("task_claimed", agent, t.project, agent, id, id .. " claimed by " .. agent,
  jobj({"title", J(t.title), "priority", J(tonumber(t.priority)),
    "attempt", J(attempt), "max_attempts", J(tonumber(t.max_attempts))}))
return {id, flat, deps, notes}

-- Shared head of every task script (bus/tasks/task_store.py prepends it to each bus/lua/task_*.lua body).
--
-- Calling convention, the same for every task script:
--   KEYS[1] events stream   KEYS[2] all tasks (zset)   KEYS[3] id sequence   KEYS[4] claims (zset)
--   KEYS[5..]  keys the operation knows up front: its task's hash, deps, dependents and notes (the
--              helpers below derive the same names), or its project's task index and ready queue
--   ARGV[1..6] key templates from bus.wire.keys.Keys for task, deps, dependents, notes, ready and project
--              tasks, with "\1" where the task id / project goes
--   ARGV[7]    approximate MAXLEN of the events stream
--   ARGV[8..]  the operation's own arguments (read with arg(n))
--
-- Keys that depend on what the graph holds (a dependency's hash, a dependent's project queue) cannot be
-- known before the script runs, so scripts derive them from the templates. That is fine on one Redis
-- instance, which is what ittybus runs on; it would not be on Redis Cluster.
--
-- Errors are raised before the first write ("IB_NOTFOUND ...", "IB_CONFLICT ...", "IB_INVALID ..."),
-- because Redis does not roll a script back.

local EVENTS, TASKS, SEQ, CLAIMS = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local TEMPLATES = {task = ARGV[1], deps = ARGV[2], dependents = ARGV[3], notes = ARGV[4],
                   ready = ARGV[5], project = ARGV[6]}
local MAXLEN = ARGV[7]
local MARK = "\1"

local function arg(n)
  return ARGV[7 + n]
end

local function key(kind, id)
  local tmpl = TEMPLATES[kind]
  local at = string.find(tmpl, MARK, 1, true)
  return string.sub(tmpl, 1, at - 1) .. id .. string.sub(tmpl, at + 1)
end

-- A string, not an error table: Redis 6.2 (the embedded one) fails on tables in its error handler and
-- the message is lost; bus.tasks finds the code in either server's wording.
local function raise(code, msg)
  error(code .. " " .. msg, 0)
end

-- Time from the Redis clock: milliseconds, and the envelope's ISO 8601 form (UTC, seconds).
local function civil(days)
  -- days since 1970-01-01 to year, month, day (proleptic Gregorian)
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524)
    - math.floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  if m <= 2 then y = y + 1 end
  return y, m, d
end

local CLOCK = redis.call("TIME")
local NOW_S = tonumber(CLOCK[1])
local NOW_MS = NOW_S * 1000 + math.floor(tonumber(CLOCK[2]) / 1000)
local NOW_ISO
do
  local days = math.floor(NOW_S / 86400)
  local secs = NOW_S - days * 86400
  local y, m, d = civil(days)
  NOW_ISO = string.format("%04d-%02d-%02dT%02d:%02d:%02d+00:00", y, m, d,
    math.floor(secs / 3600), math.floor(secs % 3600 / 60), secs % 60)
end

-- JSON built by hand where order or empty arrays matter (cjson turns {} arrays into objects).
-- cjson writes "/" as "\/"; undoing that is safe because every "/" it writes has that one backslash.
local function J(value)
  if value == nil then return "null" end
  return (string.gsub(cjson.encode(value), "\\/", "/"))
end

local function jarr(list)
  local parts = {}
  for i, v in ipairs(list) do parts[i] = J(v) end
  return "[" .. table.concat(parts, ",") .. "]"
end

-- jobj({"a", J(1), "b", J("x")}) -> {"a":1,"b":"x"}; values are JSON text already.
local function jobj(pairs)
  local parts = {}
  for i = 1, #pairs, 2 do parts[#parts + 1] = J(pairs[i]) .. ":" .. pairs[i + 1] end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- Events stay small: long texts are cut (on a UTF-8 boundary) and the whole text stays in the task.
local MSG_BYTES, DATA_BYTES = 200, 2000
local function clip(text, limit)
  if #text <= limit then return text end
  local cut = limit
  -- back off while the first byte dropped is a continuation byte (10xxxxxx) of a kept character
  while cut > 0 and string.byte(text, cut + 1) >= 128 and string.byte(text, cut + 1) < 192 do
    cut = cut - 1
  end
  return string.sub(text, 1, cut) .. "\226\128\166"
end

local function first_line(text)
  return clip(string.match(text, "^[^\n]*"), MSG_BYTES)
end

-- One event, the same envelope as bus.events.envelope.make_event + encode, appended to the events stream.
local function emit(etype, sender, project, agent, task, msg, data)
  local body = jobj({"ts", J(NOW_ISO), "type", J(etype), "from", J(sender), "project", J(project),
    "agent", J(agent), "task", J(task), "msg", J(msg), "data", data})
  return redis.call("XADD", EVENTS, "MAXLEN", "~", MAXLEN, "*", "e", body)
end

local function field(id, name)
  local v = redis.call("HGET", key("task", id), name)
  if v == false then return nil end
  return v
end

local function must_exist(id)
  if redis.call("EXISTS", key("task", id)) == 0 then
    raise("IB_NOTFOUND", "no task " .. id .. ": check the id with `ib task list`")
  end
end

local function append_note(id, kind, text, source)
  redis.call("RPUSH", key("notes", id), cjson.encode({kind = kind, text = text, ts = NOW_MS,
    source_task = source}))
end

-- Highest priority first, then oldest: (10 - priority) in the high digits, the creation sequence below.
local function ready_score(id)
  local priority = tonumber(field(id, "priority"))
  local seq = tonumber(field(id, "seq"))
  return string.format("%.0f", (10 - priority) * 1e13 + seq)
end

-- Put a task in its project's ready queue and say so on the bus.
local function make_ready(id, reason, extra)
  local project = field(id, "project")
  redis.call("HSET", key("task", id), "status", "ready")
  redis.call("ZADD", key("ready", project), ready_score(id), id)
  local data = {"reason", J(reason), "title", J(field(id, "title")),
    "priority", J(tonumber(field(id, "priority")))}
  for _, v in ipairs(extra or {}) do data[#data + 1] = v end
  local msg = id .. " ready"
  if reason == "retry" then
    msg = id .. " back to ready (will retry)"
  elseif reason == "released" or reason == "reclaimed" then
    msg = id .. " back to ready (" .. reason .. ")"
  end
  emit("task_ready", "system", project, nil, id, msg, jobj(data))
end

local function all_deps_done(id)
  for _, dep in ipairs(redis.call("SMEMBERS", key("deps", id))) do
    if field(dep, "status") ~= "done" then return false end
  end
  return true
end

-- A claimed task leaves the claim index and forgets who held it (on retry, release, reclaim).
local function unclaim(id)
  redis.call("HDEL", key("task", id), "claimed_by", "claimed_at")
  redis.call("ZREM", CLAIMS, id)
end

-- Sort ids by claim order: highest priority first, then oldest.
local function by_claim_order(ids)
  local rank = {}
  for _, id in ipairs(ids) do rank[id] = tonumber(ready_score(id)) end
  table.sort(ids, function(a, b) return rank[a] < rank[b] end)
  return ids
end

-- When a task fails for good, every task waiting on it (draft or pending, transitively) can never run:
-- fail them too, oldest first, so nothing is left pending behind a dead end.
local function fail_dependents(root)
  local seen, doomed, queue = {[root] = true}, {}, {root}
  while #queue > 0 do
    local current = table.remove(queue, 1)
    for _, dep in ipairs(redis.call("SMEMBERS", key("dependents", current))) do
      local status = field(dep, "status")
      if not seen[dep] and (status == "pending" or status == "draft") then
        seen[dep] = true
        doomed[#doomed + 1] = dep
        queue[#queue + 1] = dep
      end
    end
  end
  local seqs = {}
  for _, id in ipairs(doomed) do seqs[id] = tonumber(field(id, "seq")) end
  table.sort(doomed, function(a, b) return seqs[a] < seqs[b] end)
  for _, id in ipairs(doomed) do
    redis.call("HSET", key("task", id), "status", "failed")
    local reason = "dependency " .. root .. " failed"
    local attempt, max_attempts = tonumber(field(id, "attempt")), tonumber(field(id, "max_attempts"))
    emit("task_failed", "system", field(id, "project"), nil, id, id .. " failed: " .. reason,
      jobj({"reason", J(reason), "attempt", J(attempt), "max_attempts", J(max_attempts),
        "will_retry", "false", "blocked_by", J(root)}))
  end
  return doomed
end

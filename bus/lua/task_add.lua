-- Add a task. KEYS[5] the project's task index, KEYS[6] the project's ready queue.
-- arg: 1 explicit id or "", 2 slug to start from, 3 project, 4 title, 5 body, 6 priority,
--      7 max_attempts, 8 test_cmd or "", 9 "1" for a draft, 10 the schedule that added it or "",
--      11 the paths it touches as a JSON list or "", 12 the agent program (`--cli`) or "",
--      13.. dependency ids.
-- Returns the new task's id.
local explicit, slug, project, title = arg(1), arg(2), arg(3), arg(4)
local body, priority, max_attempts, test_cmd, draft = arg(5), arg(6), arg(7), arg(8), arg(9) == "1"
local schedule, touches, cli = arg(10), arg(11), arg(12)
local deps = {}
for i = 13, #ARGV - 7 do deps[#deps + 1] = arg(i) end

for _, dep in ipairs(deps) do
  local status = field(dep, "status")
  if status == nil then
    raise("IB_NOTFOUND", "unknown dependency " .. dep .. ": no task has that id")
  elseif status == "failed" then
    raise("IB_CONFLICT", "dependency " .. dep .. " has failed, so this task could never run")
  end
end

local id = explicit
if id ~= "" then
  if redis.call("EXISTS", key("task", id)) == 1 then
    raise("IB_CONFLICT", "task " .. id .. " already exists: pick another id")
  end
else
  id = slug
  local n = 2
  while redis.call("EXISTS", key("task", id)) == 1 do
    local suffix = "-" .. n
    id = string.gsub(string.sub(slug, 1, 64 - #suffix), "[-.]+$", "") .. suffix
    n = n + 1
  end
end

local seq = redis.call("INCR", SEQ)
local hash = key("task", id)
redis.call("HSET", hash, "id", id, "project", project, "title", title, "body", body,
  "priority", priority, "status", draft and "draft" or "pending", "attempt", 0,
  "max_attempts", max_attempts, "created_at", NOW_MS, "seq", seq)
if test_cmd ~= "" then redis.call("HSET", hash, "test_cmd", test_cmd) end
if schedule ~= "" then redis.call("HSET", hash, "schedule", schedule) end
if touches ~= "" then redis.call("HSET", hash, "touches", touches) end
if cli ~= "" then redis.call("HSET", hash, "cli", cli) end
for _, dep in ipairs(deps) do
  redis.call("SADD", key("deps", id), dep)
  redis.call("SADD", key("dependents", dep), id)
end
redis.call("ZADD", TASKS, seq, id)
redis.call("ZADD", KEYS[5], seq, id)

local ready = not draft and all_deps_done(id)
local status = draft and "draft" or (ready and "ready" or "pending")
local label = draft and " added as a draft" or " added"
local data = {"title", J(title), "priority", J(tonumber(priority)), "status", J(status), "after", jarr(deps)}
if schedule ~= "" then
  label = label .. " by schedule " .. schedule
  data[#data + 1] = "schedule"
  data[#data + 1] = J(schedule)
end
emit("task_added", "system", project, nil, id, id .. label, jobj(data))
if ready then make_ready(id, "added") end
return id

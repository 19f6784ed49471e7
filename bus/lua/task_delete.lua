-- Delete a task nothing depends on. KEYS[5..8] the task's hash, deps, dependents and notes.
-- arg: 1 task id. Returns 1.
local id = arg(1)
must_exist(id)
local dependents = redis.call("SORT", key("dependents", id), "ALPHA")
if #dependents > 0 then
  raise("IB_CONFLICT", "task " .. id .. " cannot be deleted: " .. table.concat(dependents, ", ") ..
    " depend" .. (#dependents == 1 and "s" or "") .. " on it; delete or change those first")
end
local status, holder = field(id, "status"), field(id, "claimed_by")
if status == "claimed" then
  raise("IB_CONFLICT", "task " .. id .. " is claimed by " .. holder .. ": release it before deleting it")
end

local project = field(id, "project")
for _, dep in ipairs(redis.call("SMEMBERS", key("deps", id))) do
  redis.call("SREM", key("dependents", dep), id)
end
redis.call("DEL", key("task", id), key("deps", id), key("dependents", id), key("notes", id))
redis.call("ZREM", TASKS, id)
redis.call("ZREM", key("project", project), id)
redis.call("ZREM", key("ready", project), id)
redis.call("ZREM", CLAIMS, id)
return 1

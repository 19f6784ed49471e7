-- Change a task's title, body or priority, or publish a draft.
-- KEYS[5..8] the task's hash, deps, dependents and notes.
-- arg: 1 task id, then name/value pairs: "title" t, "body" b, "priority" p, "publish" "1".
-- Returns the task's status afterwards.
local id = arg(1)
must_exist(id)
local changes = {}
for i = 2, #ARGV - 7, 2 do changes[arg(i)] = arg(i + 1) end
local status = field(id, "status")
if changes.publish and status ~= "draft" then
  raise("IB_CONFLICT", "task " .. id .. " is " .. status .. ", not a draft: it is published already")
end

local hash = key("task", id)
if changes.title then redis.call("HSET", hash, "title", changes.title) end
if changes.body then redis.call("HSET", hash, "body", changes.body) end
if changes.priority then
  redis.call("HSET", hash, "priority", changes.priority)
  if status == "ready" then redis.call("ZADD", key("ready", field(id, "project")), ready_score(id), id) end
end
if changes.publish then
  if all_deps_done(id) then
    make_ready(id, "published")
    status = "ready"
  else
    redis.call("HSET", hash, "status", "pending")
    status = "pending"
  end
end
return status

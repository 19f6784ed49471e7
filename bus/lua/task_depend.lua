-- Make a task wait for more tasks. Refuses an edge that would close a cycle, naming the cycle.
-- KEYS[5..8] the task's hash, deps, dependents and notes.
-- arg: 1 task id, 2.. the new dependency ids. Returns the task's status afterwards.
local id = arg(1)
must_exist(id)
local status = field(id, "status")
if status ~= "draft" and status ~= "pending" and status ~= "ready" then
  raise("IB_CONFLICT", "task " .. id .. " is " .. status ..
    ": only a task not yet claimed can get dependencies")
end

-- The dependency path from `from` to `target`, or nil: following it from the new edge closes a cycle.
local function path_to(from, target)
  local parent, stack = {[from] = false}, {from}
  while #stack > 0 do
    local node = table.remove(stack)
    if node == target then
      local path = {}
      while node do
        table.insert(path, 1, node)
        node = parent[node]
      end
      return path
    end
    for _, nxt in ipairs(redis.call("SMEMBERS", key("deps", node))) do
      if parent[nxt] == nil then
        parent[nxt] = node
        stack[#stack + 1] = nxt
      end
    end
  end
  return nil
end

local deps = {}
for i = 2, #ARGV - 7 do deps[#deps + 1] = arg(i) end
for _, dep in ipairs(deps) do
  local dep_status = field(dep, "status")
  if dep_status == nil then
    raise("IB_NOTFOUND", "unknown dependency " .. dep .. ": no task has that id")
  elseif dep_status == "failed" then
    raise("IB_CONFLICT", "dependency " .. dep .. " has failed, so " .. id .. " could never run")
  end
  local path = path_to(dep, id)
  if path then
    raise("IB_INVALID", id .. " cannot wait for " .. dep .. ": that makes a cycle " .. id .. " -> " ..
      table.concat(path, " -> "))
  end
end

for _, dep in ipairs(deps) do
  redis.call("SADD", key("deps", id), dep)
  redis.call("SADD", key("dependents", dep), id)
end
if status == "ready" and not all_deps_done(id) then
  redis.call("HSET", key("task", id), "status", "pending")
  redis.call("ZREM", key("ready", field(id, "project")), id)
  status = "pending"
end
return status

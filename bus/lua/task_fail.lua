-- A claimed task failed: back to ready while attempts remain, else failed for good (and every task
-- waiting on it with it). KEYS[5..8] the task's hash, deps, dependents and notes.
-- arg: 1 task id, 2 agent, 3 reason. Returns {will_retry (0/1), ids failed with it...}.
local id, agent, reason = arg(1), arg(2), arg(3)
local hash = KEYS[5]
must_exist(id)
local status, holder = field(id, "status"), field(id, "claimed_by")
if status == "done" then
  raise("IB_CONFLICT", "task " .. id .. " is already done; a finished task cannot fail")
elseif status ~= "claimed" then
  raise("IB_CONFLICT", "task " .. id .. " is " .. status .. ", not claimed: only a claimed task can fail")
elseif holder ~= agent then
  raise("IB_CONFLICT", "task " .. id .. " is claimed by " .. holder .. ", not " .. agent ..
    ": only the claimer can fail it")
end

local attempt, max_attempts = tonumber(field(id, "attempt")), tonumber(field(id, "max_attempts"))
local will_retry = attempt < max_attempts
local project = field(id, "project")
if reason ~= "" then append_note(id, "test_failure", reason, id) end
local msg = id .. " failed (attempt " .. attempt .. "/" .. max_attempts .. ")"
if reason ~= "" then msg = msg .. ": " .. first_line(reason) end
local data = jobj({"reason", J(clip(reason, DATA_BYTES)), "attempt", J(attempt),
  "max_attempts", J(max_attempts), "will_retry", J(will_retry)})

local result = {will_retry and 1 or 0}
if will_retry then
  unclaim(id)
  emit("task_failed", agent, project, agent, id, msg, data)
  make_ready(id, "retry")
else
  redis.call("HSET", hash, "status", "failed")
  redis.call("ZREM", CLAIMS, id)
  emit("task_failed", agent, project, agent, id, msg, data)
  for _, doomed in ipairs(fail_dependents(id)) do result[#result + 1] = doomed end
end
return result

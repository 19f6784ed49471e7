-- Finish a claimed task and wake what it unblocks, in one step: the task_done event and one
-- task_ready per dependent that became ready are appended together, so no wake-up can be lost.
-- KEYS[5..8] the task's hash, deps, dependents and notes.
-- arg: 1 task id, 2 agent, 3 summary. Returns the ids that became ready, in claim order.
local id, agent, summary = arg(1), arg(2), arg(3)
local hash = KEYS[5]
must_exist(id)
local status, holder = field(id, "status"), field(id, "claimed_by")
if status == "done" then
  raise("IB_CONFLICT", "task " .. id .. " is already done (by " .. (holder or "?") .. "); nothing to finish")
elseif status ~= "claimed" then
  raise("IB_CONFLICT", "task " .. id .. " is " .. status .. ", not claimed: claim it before marking it done")
elseif holder ~= agent then
  raise("IB_CONFLICT", "task " .. id .. " is claimed by " .. holder .. ", not " .. agent ..
    ": only the claimer can finish it")
end

redis.call("HSET", hash, "status", "done", "done_at", NOW_MS, "summary", summary)
redis.call("ZREM", CLAIMS, id)
if summary ~= "" then append_note(id, "result", summary, id) end

local woken = {}
for _, dep in ipairs(redis.call("SMEMBERS", KEYS[7])) do
  if field(dep, "status") == "pending" and all_deps_done(dep) then woken[#woken + 1] = dep end
end
by_claim_order(woken)

local project = field(id, "project")
emit("task_done", agent, project, agent, id, id .. " completed by " .. agent,
  jobj({"title", J(field(id, "title")), "summary", J(clip(summary, DATA_BYTES)),
    "attempt", J(tonumber(field(id, "attempt"))), "ready", jarr(woken)}))
for _, dep in ipairs(woken) do make_ready(dep, "deps_done", {"unblocked_by", J(id)}) end
return woken

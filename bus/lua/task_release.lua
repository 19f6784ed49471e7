-- Put a claimed task back in the ready queue; the attempt it was on does not count.
-- KEYS[5..8] the task's hash, deps, dependents and notes.
-- arg: 1 task id, 2 reason ("released" or "reclaimed"), 3 the claim it must still be, as
--      "<agent> <claimed_at>", or "" for any claim. Returns 1 when released, 0 when the claim moved on.
local id, reason, expected = arg(1), arg(2), arg(3)
must_exist(id)
local status, holder, since = field(id, "status"), field(id, "claimed_by"), field(id, "claimed_at")
if status ~= "claimed" then
  if expected ~= "" then return 0 end
  raise("IB_CONFLICT", "task " .. id .. " is " .. status .. ", not claimed: there is nothing to release")
end
if expected ~= "" and expected ~= holder .. " " .. since then return 0 end

redis.call("HINCRBY", KEYS[5], "attempt", -1)
unclaim(id)
make_ready(id, reason, {"previous_agent", J(holder)})
return 1

-- A state change written and told in one step: the record moves only from the state its writer read, and
-- the `state` event is appended with it. Prepended to publish_once.lua (bus.events.streams.move_state),
-- whose KEYS[1], KEYS[2] and ARGV[1..3] it leaves to that script.
--   KEYS[3] the agent's hash   ARGV[4] the name of its state field   ARGV[5] the state the move starts from
--   ARGV[6..] field, value, ... to write
-- Returns {the state held now, 2} when it is not ARGV[5] or the record is gone: nothing is written.
local held = redis.call('HGET', KEYS[3], ARGV[4])
if not held or held ~= ARGV[5] then
  return {held or '', 2}
end
redis.call('HSET', KEYS[3], unpack(ARGV, 6))

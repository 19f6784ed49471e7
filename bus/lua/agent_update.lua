-- Some fields of an agent's record, written only while the record is whole (holds its id). A write that
-- comes after `ib kill` removed the agent (a pane watcher's tick, a hook that fires as the pane dies) would
-- otherwise leave a hash of those few fields: a ghost that every reader refused ("bad Agent record:
-- field 'id' is missing"), in `/shot` and `ib list` alike.
--   KEYS[1] the agent's hash   ARGV[1] the name of its id field   ARGV[2..] field, value, ...
-- Returns 1 when written, 0 when there is no such agent (nothing is written).
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1

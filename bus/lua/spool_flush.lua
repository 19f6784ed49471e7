-- Publish one spooled event exactly once.
-- KEYS[1] events stream, KEYS[2] marker of this spool id
-- ARGV[1] approximate MAXLEN, ARGV[2] the envelope JSON, ARGV[3] marker TTL in seconds
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[3]) then
  return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'e', ARGV[2])
end
return false

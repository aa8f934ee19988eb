package lease

import "github.com/redis/go-redis/v9"

// acquireScript takes the lease and issues its fencing token in one step.
//
// SET NX and INCR run in one script rather than two round trips because the fence is only worth something if its order
// is the order of acquisition. With two calls, holder A could win SET NX, stall before its INCR, lose the key to expiry,
// and B could acquire and INCR to 7 before A's INCR returns 8: the older holder would then carry the higher fence and its
// stale writes would beat B's. A crash between the two calls would also leave a held key with no token at all.
//
// The counter has no TTL on purpose: if it expired, fences would restart at 1 and every guarded resource would reject
// the next holder as stale.
//
// KEYS[1] lease key, KEYS[2] fence counter; ARGV[1] token, ARGV[2] ttl in ms.
// Returns {fence, 0} when acquired, {0, pttl of the current holder} when not.
var acquireScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {redis.call('INCR', KEYS[2]), 0}
end
return {0, redis.call('PTTL', KEYS[1])}
`)

// renewScript extends the lease only while the key still holds our token. A GET followed by a separate PEXPIRE would
// leave a window in which the key expires and another holder takes it; the PEXPIRE would then extend that holder's lock.
//
// KEYS[1] lease key; ARGV[1] token, ARGV[2] ttl in ms. Returns 1 when renewed, 0 when the key is gone or not ours.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`)

// releaseScript deletes the key only while it holds our token, so a holder whose lease expired cannot delete the lock
// of the holder that came after it.
//
// KEYS[1] lease key; ARGV[1] token. Returns 1 when deleted, 0 when the key was gone or not ours.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// fencePrelude starts every fenced script: it rejects a token lower than the highest one the resource has seen and
// records a higher one. Equal tokens pass, so one holder may write several times. The body that follows runs in the
// same script, so no newer holder can slip in between the check and the write.
//
// KEYS[1] the resource's guard key; ARGV[1] the fence. The body sees its own keys from KEYS[2] and arguments from
// ARGV[2].
const fencePrelude = `
local seen = tonumber(redis.call('GET', KEYS[1]) or '0')
local fence = tonumber(ARGV[1])
if fence < seen then
  return redis.error_reply('STALEFENCE ' .. seen)
end
if fence > seen then
  redis.call('SET', KEYS[1], ARGV[1])
end
`

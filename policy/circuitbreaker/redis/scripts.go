package redis

import goredis "github.com/redis/go-redis/v9"

// The scripts keep a breaker name's fleet state in one hash, KEYS[1]: its state s
// ("closed", "open" or "half-open"; absent: "closed"), its epoch e (the count of its
// transitions; absent: 0), and, for the half-open of that epoch, the trial tickets taken
// t, and the trials done d, failed f and slow w. Each transition moves e on by one,
// clears the counts, and is announced with SPUBLISH on KEYS[2], the name's channel (in
// the key's hash slot, so that a cluster keeps it on the key's node): "<state> <epoch>".
// Each returns {applied or granted (0/1), state, epoch}, the state after the script.

// readHead is the preamble of every script: the state and the epoch.
const readHead = `
local v = redis.call('HMGET', KEYS[1], 's', 'e')
local st = v[1] or 'closed'
local ep = tonumber(v[2] or '0')
local function move(to)
  ep = ep + 1
  st = to
  redis.call('HSET', KEYS[1], 's', st, 'e', ep, 't', 0, 'd', 0, 'f', 0, 'w', 0)
  redis.call('SPUBLISH', KEYS[2], st .. ' ' .. ep)
end
`

// proposeScript is a compare-and-set: ARGV[1] the state left, ARGV[2] its epoch, ARGV[3]
// the state entered. Applied only when the fleet is still in that state at that epoch.
var proposeScript = goredis.NewScript(readHead + `
if st == ARGV[1] and ep == tonumber(ARGV[2]) then
  move(ARGV[3])
  return {1, st, ep}
end
return {0, st, ep}
`)

// trialScript takes a half-open trial ticket: ARGV[1] the epoch the member knows,
// ARGV[2] the trials permitted. Open at that epoch, the fleet goes half-open with this
// first ticket; half-open, a ticket is granted while fewer than ARGV[2] were taken.
var trialScript = goredis.NewScript(readHead + `
if st == 'open' and ep == tonumber(ARGV[1]) then
  move('half-open')
  redis.call('HSET', KEYS[1], 't', 1)
  return {1, st, ep}
end
if st == 'half-open' then
  if tonumber(redis.call('HGET', KEYS[1], 't') or '0') < tonumber(ARGV[2]) then
    redis.call('HINCRBY', KEYS[1], 't', 1)
    return {1, st, ep}
  end
end
return {0, st, ep}
`)

// recordScript counts a trial's outcome in the half-open of epoch ARGV[1]: ARGV[2]
// failed, ARGV[3] slow (0/1), ARGV[4] ignored (1: the ticket is given back). Once
// ARGV[5] trials are done, at least ARGV[6] failed or ARGV[7] slow open the fleet again;
// fewer close it.
var recordScript = goredis.NewScript(readHead + `
if st ~= 'half-open' or ep ~= tonumber(ARGV[1]) then
  return {0, st, ep}
end
if ARGV[4] == '1' then
  if tonumber(redis.call('HGET', KEYS[1], 't') or '0') > 0 then
    redis.call('HINCRBY', KEYS[1], 't', -1)
  end
  return {0, st, ep}
end
local d = redis.call('HINCRBY', KEYS[1], 'd', 1)
local f = redis.call('HINCRBY', KEYS[1], 'f', ARGV[2])
local w = redis.call('HINCRBY', KEYS[1], 'w', ARGV[3])
if d >= tonumber(ARGV[5]) then
  if f >= tonumber(ARGV[6]) or w >= tonumber(ARGV[7]) then
    move('open')
  else
    move('closed')
  end
  return {1, st, ep}
end
return {0, st, ep}
`)

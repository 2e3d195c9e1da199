package redis

import (
	"math"

	goredis "github.com/redis/go-redis/v9"
)

// gcraScript is GCRA on the TAT in KEYS[1], with the server's clock.
//
// Lua's numbers are doubles, exact only up to 2^53, and nanoseconds since the epoch are
// beyond that; so every time and duration is a pair (seconds, nanoseconds) of exact
// integers with 0 <= nanoseconds < 1e9, and only additions, subtractions and comparisons
// are done on them. The TAT is stored as the decimal count of nanoseconds since the Unix
// epoch, and the key expires when the burst is full again (the TAT, rounded up to a
// millisecond): an absent key is a TAT in the past. It calls TIME before writing, which
// needs effects replication: Redis 5 or later, where it is the default.
//
// A key that holds another type answers with Redis's WRONGTYPE error, and a string that
// is not a TAT (not 1 to 24 decimal digits, so that its seconds stay below 2^53) with a
// BADTAT error, before anything is written: these are the key's data errors (dataError),
// whatever the Redis version (a raised error would be reported as ERR by Redis 6).
//
// ARGV[1] is the operation:
//
//	'r' reserve:   ARGV[2..7] = T, tau = (permits-1)·T, maxWait, as pairs.
//	               Returns {0, wait} (refused: the retry-after) or
//	               {1, wait, prev, next, at} (reserved; prev is 0,0 without a TAT).
//	'c' cancel:    ARGV[2..7] = prev, next, at of a reservation, as pairs.
//	               Restores prev if the TAT is still next and now <= at. Returns {1} or {0}.
//	'a' available: returns {1, tat, now}, or {0, 0, 0, now} without a TAT.
const gcraScript = `
local E = 1000000000
local function norm(s, n)
  local q = math.floor(n / E)
  return s + q, n - q * E
end
local function lt(as, an, bs, bn)
  return as < bs or (as == bs and an < bn)
end
local function arg(i) return tonumber(ARGV[i]) end
local function store(key, s, n, nows, nown)
  local ds, dn = norm(s - nows, n - nown)
  redis.call('SET', key, string.format('%d%09d', s, n), 'PX', ds * 1000 + math.ceil(dn / 1000000))
end

local key, op = KEYS[1], ARGV[1]
local t = redis.call('TIME')
local nows, nown = tonumber(t[1]), tonumber(t[2]) * 1000
local v = redis.pcall('GET', key)
if type(v) == 'table' and v.err then return redis.error_reply(v.err) end
local ts, tn = 0, 0
if v then
  if #v > 24 or not string.find(v, '^%d+$') then
    return redis.error_reply('BADTAT ' .. key .. ' does not hold a TAT: a decimal count of nanoseconds')
  end
  ts, tn = tonumber(string.sub(v, 1, -10)) or 0, tonumber(string.sub(v, -9))
end

if op == 'r' then
  local bs, bn = nows, nown
  if v and lt(nows, nown, ts, tn) then bs, bn = ts, tn end
  local ws, wn = norm(bs - nows - arg(4), bn - nown - arg(5))
  if lt(arg(6), arg(7), ws, wn) then return {0, ws, wn} end
  local xs, xn = norm(bs + arg(2), bn + arg(3))
  store(key, xs, xn, nows, nown)
  if ws < 0 then ws, wn = 0, 0 end
  local as, an = norm(nows + ws, nown + wn)
  return {1, ws, wn, ts, tn, xs, xn, as, an}
elseif op == 'c' then
  if lt(arg(6), arg(7), nows, nown) then return {0} end
  if not v or ts ~= arg(4) or tn ~= arg(5) then return {0} end
  local ps, pn = arg(2), arg(3)
  if lt(nows, nown, ps, pn) then
    store(key, ps, pn, nows, nown)
  else
    redis.call('DEL', key)
  end
  return {1}
elseif op == 'a' then
  if not v then return {0, 0, 0, nows, nown} end
  return {1, ts, tn, nows, nown}
end
return redis.error_reply('ERR unknown operation')
`

var script = goredis.NewScript(gcraScript)

// badTAT starts the error the script answers for a key whose string value is not a TAT.
const badTAT = "BADTAT"

const second = int64(1e9)

// split returns d ≥ 0 as (seconds, nanoseconds).
func split(d int64) (int64, int64) { return d / second, d % second }

// join returns s·1e9 + n for |n| < 2e9, saturating at the int64 range.
func join(s, n int64) int64 {
	for n < 0 {
		s, n = s-1, n+second
	}
	for n >= second {
		s, n = s+1, n-second
	}
	switch {
	case s > (math.MaxInt64-n)/second:
		return math.MaxInt64
	case s < (math.MinInt64+second)/second:
		return math.MinInt64
	}
	return s*second + n
}

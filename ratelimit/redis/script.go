package redis

import (
	"math"

	goredis "github.com/redis/go-redis/v9"
)

// gcraScript is GCRA on the TAT in KEYS[1], with the freed slots of canceled reservations
// in KEYS[2], on the server's clock.
//
// Lua's numbers are doubles, exact only up to 2^53, and nanoseconds since the epoch are
// beyond that; so every time and duration is a pair (seconds, nanoseconds) of exact
// integers with 0 <= nanoseconds < 1e9, and only additions, subtractions and comparisons
// are done on them. The TAT is stored as the decimal count of nanoseconds since the Unix
// epoch, followed by the rate it is written at and the count of its conversions, one
// space apart: "<tat> <T in ns> <Permits> <count>" (a bare "<tat>", as earlier versions
// wrote it, has no known rate: it is read at the call's rate and written with it when it
// moves). The key expires when the burst is full again (the TAT, rounded up to a
// millisecond): an absent key is a TAT in the past. It calls TIME before writing, which
// needs effects replication: Redis 5 or later, where it is the default.
//
// A reserve or available whose rate (T, Permits) is not the stored one converts the
// schedule first (convert), when the stored rate is known and the TAT is ahead of now:
// the TAT moves to now + (Permits - fill)·T of the new rate, the freed slots go, and the
// count of conversions moves on; otherwise the new rate is just taken. The conversion
// alone computes in nanoseconds as Lua numbers (doubles): exact below 2^53 ns, a partial
// permit's share to within a nanosecond.
//
// Every permit granted holds a slot of the schedule, a stretch of N·T that no other permit
// holds, whose start is at or after the permit's time and whose end at most Permits·T
// after it: that is what bounds every window. A reservation appended at the TAT
// holds [max(TAT, now), +N·T). A canceled reservation that is the last one moves the TAT
// back to its start; one that others stand behind leaves its slot, from now on, in
// KEYS[2]: at most maxFreed slots "start-end", each time as seconds.nanoseconds since the
// epoch (exactly 9 digits after the point, seconds below 10^12), one space apart, sorted,
// disjoint and not touching, each ending before the TAT, the key expiring when the last
// one ends. A reservation takes the earliest freed slot that holds its N·T before
// appending at the TAT. The freed slots are read only while the TAT is ahead of now
// (otherwise they are all past), those that end at or before now are ignored, and a
// reservation that finds no TAT deletes KEYS[2], whatever it holds.
//
// A key that holds another type answers with Redis's WRONGTYPE error, a TAT key that is
// not 1 to 24 decimal digits (so that its seconds stay below 2^53), alone or followed by
// a T of 1 to 24 digits (not 0), a Permits of 1 to 10 digits (not 0) and a count of 1 to
// 15 digits, with a BADTAT error,
// and a freed-slots key that is not as above with a BADSLOTS error, before anything is
// written: these are the key's data errors (dataError), whatever the Redis version (a
// raised error would be reported as ERR by Redis 6).
//
// A limiter with further windows has their TAT keys in KEYS[3..], which the operations
// 'w' and 'v', and the cancel of a reservation with windows, use (see windowscript.go).
//
// ARGV[1] is the operation:
//
//	'r' reserve:   ARGV[2..11] = inc = N·T, tol = (Permits-N)·T, maxWait, as pairs, k:
//	               k requests alike, and their rate, T as a pair and Permits;
//	               ARGV[12..21] the next ones, and so on. The
//	               requests are decided in order, each against the TAT and freed slots
//	               the one before left, all at one now, as that many calls would be; the
//	               TAT and the freed slots are written once, at the end. Returns now, as
//	               a pair, then the answers in order, in runs of five numbers {code, k,
//	               s, n, count}, count being the key's conversions when the run was
//	               decided (a reserved request's Grant.Epoch): {0, k, wait} for k
//	               requests refused, each with the retry-after
//	               wait (one refused request leaves the state as it was, so the rest of
//	               its k alike are refused too, with the same wait); {1, k, prev} for k
//	               reserved, the first one's slot [max(prev, now), +inc), each next one's
//	               starting where the one before ends: prev is the TAT before (0,0
//	               without one) for slots appended at the TAT, the slot's start for one
//	               freed slot taken again (k = 1). A reserved request's wait is then
//	               max(max(prev, now) - now - tol, 0), and its permit time now + wait.
//	               When the freed-slots key turns out to be a data error only at a later
//	               request, the answers so far are written and followed by {2, 0, 0, 0, count}:
//	               the rest is not decided (sent again, it gets the data error).
//	'c' cancel:    ARGV[2..7] = prev, next, at of a reservation, as pairs, ARGV[8] its
//	               count of conversions. Nothing when now > at, or when the key's count
//	               is not the reservation's. When the TAT is next, the TAT moves back to prev, and on over
//	               a freed slot that ends there; when next is before the TAT, the slot
//	               [max(prev, now), next) joins the freed slots, unless maxFreed slots
//	               are already kept and it touches none of them. Returns {1} or {0}.
//	'a' available: ARGV[2..4] = the rate, T as a pair and Permits, which converts as a
//	               reserve does; returns {1, tat, now, freed...} where freed are the freed slots as
//	               (start, end) pairs of pairs, the start clipped at now, only while the
//	               TAT is ahead of now; or {0, 0, 0, now} without a TAT.
const gcraScript = `
local E = 1000000000
local MAXFREED = 16
local function norm(s, n)
  local q = math.floor(n / E)
  return s + q, n - q * E
end
local function lt(as, an, bs, bn)
  return as < bs or (as == bs and an < bn)
end
local function arg(i) return tonumber(ARGV[i]) end
local function ns(v) return tonumber(string.sub(v, 1, -10)) or 0, tonumber(string.sub(v, -9)) end
local function fmt(s, n) return string.format('%d%09d', s, n) end
local function px(s, n, nows, nown)
  local ds, dn = norm(s - nows, n - nown)
  return ds * 1000 + math.ceil(dn / 1000000)
end

local key, fkey, op = KEYS[1], KEYS[2], ARGV[1]
local t = redis.call('TIME')
local nows, nown = tonumber(t[1]), tonumber(t[2]) * 1000
local v = redis.pcall('GET', key)
if type(v) == 'table' and v.err then return redis.error_reply(v.err) end
-- The TAT, and the rate it is written at: T as a pair (rs, rn), Permits rp, and ep the
-- conversions so far; rs is nil while the rate is unknown (a bare TAT, or no key).
local ts, tn, rs, rn, rp, ep = 0, 0, nil, 0, 0, 0
if v then
  local a, b, c, d = string.match(v, '^(%d+) (%d+) (%d+) (%d+)$')
  if not a then a = string.match(v, '^(%d+)$') end
  if not a or #a > 24 or (b and (#b > 24 or #c > 10 or #d > 15 or tonumber(c) < 1 or
      not string.find(b, '[1-9]'))) then
    return redis.error_reply('BADTAT ' .. key .. ' does not hold a TAT: a decimal count of nanoseconds' ..
      ', alone or followed by T in nanoseconds, Permits and a count, one space apart')
  end
  ts, tn = ns(a)
  if b then
    rs, rn = ns(b)
    rp, ep = tonumber(c), tonumber(d)
  end
end
local function store(key, s, n, nows, nown)
  local val = fmt(s, n)
  if rs then
    if rs > 0 then val = val .. ' ' .. fmt(rs, rn) else val = val .. string.format(' %d', rn) end
    val = val .. string.format(' %d %d', rp, ep)
  end
  redis.call('SET', key, val, 'PX', px(s, n, nows, nown))
end
-- settle writes the TAT after a change: stored while ahead of now, else deleted.
local function settle()
  if lt(nows, nown, ts, tn) then store(key, ts, tn, nows, nown) else redis.call('DEL', key) end
end

-- freed returns the freed slots that end after now and not after the TAT, each
-- {start, end} as four numbers, the start clipped at now; or nil and the data error's
-- reply. The value is checked whole first: slots, one space between two.
local SLOT = '(%d+)%.(%d%d%d%d%d%d%d%d%d)%-(%d+)%.(%d%d%d%d%d%d%d%d%d)'
local function freed()
  local f = redis.pcall('GET', fkey)
  if type(f) == 'table' and f.err then return nil, redis.error_reply(f.err) end
  local list = {}
  if not f then return list end
  local rest, k = string.gsub(f, SLOT, '')
  local ok = k > 0 and k <= MAXFREED and rest == string.rep(' ', k - 1)
  local ps, pn = -1, 0
  for a, b, c, d in string.gmatch(f, SLOT) do
    if not ok then break end
    local ss, sn, es, en = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
    ok = es < 1e12 and lt(ps, pn, ss, sn) and lt(ss, sn, es, en)
    ps, pn = es, en
    if lt(nows, nown, es, en) and not lt(ts, tn, es, en) then
      if lt(ss, sn, nows, nown) then ss, sn = nows, nown end
      list[#list + 1] = {ss, sn, es, en}
    end
  end
  if not ok then
    return nil, redis.error_reply('BADSLOTS ' .. fkey .. ' does not hold freed slots: ' ..
      '"start-end" pairs of seconds.nanoseconds, one space apart, sorted and not touching')
  end
  return list
end
local function slotText(s) return string.format('%d.%09d-%d.%09d', s[1], s[2], s[3], s[4]) end
local function keep(list)
  if #list == 0 then
    redis.call('DEL', fkey)
    return
  end
  local parts = {}
  for i, s in ipairs(list) do parts[i] = slotText(s) end
  local last = list[#list]
  redis.call('SET', fkey, table.concat(parts, ' '), 'PX', px(last[3], last[4], nows, nown))
end

-- differs reports whether the rate T = (xs, xn), Permits p is not the one the TAT is
-- written at (an unknown one included).
local function differs(xs, xn, p) return rs ~= xs or rn ~= xn or rp ~= p end
-- convert moves the TAT, ahead of now and written at the known rate rs, rn, rp, to the
-- rate T = (xs, xn), Permits p, given the freed slots list (clipped at now), as an
-- in-process limiter converts its schedule: what it owes, [now, TAT) less the freed
-- slots, counted in permits of the old rate, is owed again at the new one, and the
-- permits free now stay free, within the new burst. In nanoseconds as numbers: exact
-- while the TAT's lead and Permits·T of both rates are below 2^53 (about 104 days), the
-- old-to-new ratio of a partial permit to within a nanosecond. The caller drops the freed
-- slots and counts the conversion.
local function convert(list, xs, xn, p)
  local oT, nT = rs * E + rn, xs * E + xn
  local ahead = (ts - nows) * E + (tn - nown)
  local holes, free = 0, 0
  for _, sl in ipairs(list) do
    local from, to = (sl[1] - nows) * E + (sl[2] - nown), (sl[3] - nows) * E + (sl[4] - nown)
    holes = holes + to - from
    to = math.min(to, rp * oT)
    if to - from >= oT then free = free + math.floor((to - from) / oT) end
  end
  local a = 0
  local slack = (rp - 1) * oT - ahead
  if slack >= 0 then a = math.min(math.floor(slack / oT) + 1, rp) end
  a = math.min(a + free, rp)
  local owed = math.max(ahead - holes, 0)
  local q = math.floor(owed / oT)
  local r = owed - q * oT
  if r < 0 then q, r = q - 1, r + oT elseif r >= oT then q, r = q + 1, r - oT end
  local carried = rp * nT - (q * nT + math.ceil(r * nT / oT))
  if a > 0 then carried = math.max(carried, a * nT) end
  local d = p * nT - math.min(carried, p * nT)
  local ds = math.floor(d / E)
  ts, tn = norm(nows + ds, nown + (d - ds * E))
end
-- reconvert converts, for 'a' and 'v', a TAT ahead of now that was written at another
-- rate than T = (xs, xn), Permits p (see convert), and keeps it, the freed slots dropped.
-- It returns true when it converted; or nil and the freed slots key's data error reply.
local function reconvert(xs, xn, p)
  if not (rs and v and lt(nows, nown, ts, tn) and differs(xs, xn, p)) then return false end
  local list, err = freed()
  if not list then return nil, err end
  convert(list, xs, xn, p)
  rs, rn, rp, ep = xs, xn, p, ep + 1
  settle()
  keep({})
  return true
end

` + windowHelpers + `
if op == 'r' then
  -- The requests, in order, each against the state the one before left: the TAT and the
  -- freed slots are read once and written once, at the end. The answers go in out, no
  -- numbers so far; out[o] is the count of the run of appended reservations that the
  -- next one appended joins (0: none).
  local out, no, o = {nows, nown}, 2, 0
  local list, moved, dirty, gone = nil, false, false, false
  for j = 2, #ARGV - 9, 10 do
    local is, inn, ls, ln, mws, mwn = arg(j), arg(j + 1), arg(j + 2), arg(j + 3), arg(j + 4), arg(j + 5)
    local k = arg(j + 6)
    local xs, xn, p = arg(j + 7), arg(j + 8), arg(j + 9)
    if differs(xs, xn, p) then
      if rs and v and lt(nows, nown, ts, tn) then
        local err
        if not list then list, err = freed() end
        if not list then
          if no == 2 then return err end
          out[no + 1], out[no + 2], out[no + 3], out[no + 4], out[no + 5] = 2, 0, 0, 0, ep
          no, k = no + 5, -1
        else
          convert(list, xs, xn, p)
          list, dirty, moved, ep, o = {}, true, true, ep + 1, 0
        end
      end
      if k >= 0 then rs, rn, rp = xs, xn, p end
    end
    while k > 0 do
      local done = false
      if v and lt(nows, nown, ts, tn) then
        if not list then
          if gone then
            list = {}
          else
            local err
            list, err = freed()
            if not list then
              -- Found at a later request: what the ones before did stands.
              if no == 2 then return err end
              out[no + 1], out[no + 2], out[no + 3], out[no + 4], out[no + 5] = 2, 0, 0, 0, ep
              no, k = no + 5, -1
              break
            end
          end
        end
        for i, s in ipairs(list) do
          local hs, hn = norm(s[3] - s[1], s[4] - s[2])
          if not lt(hs, hn, is, inn) then
            local ws, wn = norm(s[1] - nows - ls, s[2] - nown - ln)
            if lt(mws, mwn, ws, wn) then
              out[no + 1], out[no + 2], out[no + 3], out[no + 4], out[no + 5] = 0, k, ws, wn, ep
              k = 0
            else
              local fs, fn = s[1], s[2]
              local xs, xn = norm(fs + is, fn + inn)
              if lt(xs, xn, s[3], s[4]) then s[1], s[2] = xs, xn else table.remove(list, i) end
              dirty = true
              out[no + 1], out[no + 2], out[no + 3], out[no + 4], out[no + 5] = 1, 1, fs, fn, ep
              k = k - 1
            end
            no, o, done = no + 5, 0, true
            break
          end
        end
      elseif not v then
        gone, list = true, {}
      end
      if not done then
        -- At the TAT, and so the rest of the k alike: each next one's slot starts where
        -- the one before ends (no freed slot holds it, as none held the first), and
        -- waits inc more, until one waits too long: it and the rest are refused. Only
        -- one when the freed slots are not read yet: the next one reads them, as a call
        -- alone would.
        local bs, bn = nows, nown
        if v and lt(nows, nown, ts, tn) then bs, bn = ts, tn end
        local ws, wn = norm(bs - nows - ls, bn - nown - ln)
        local m, lim = 0, k
        if not list then lim = 1 end
        while m < lim and (ws < mws or (ws == mws and wn <= mwn)) do
          bs, bn, ws, wn = bs + is, bn + inn, ws + is, wn + inn
          if bn >= E then bs, bn = bs + 1, bn - E end
          if wn >= E then ws, wn = ws + 1, wn - E end
          m = m + 1
        end
        if m > 0 then
          if o > 0 then
            out[o] = out[o] + m
          else
            out[no + 1], out[no + 2], out[no + 3], out[no + 4], out[no + 5] = 1, m, ts, tn, ep
            no, o = no + 5, no + 2
          end
          ts, tn, v, moved = bs, bn, true, true
        end
        if m < lim then
          out[no + 1], out[no + 2], out[no + 3], out[no + 4], out[no + 5] = 0, k - m, ws, wn, ep
          no, o, k = no + 5, 0, 0
        else
          k = k - m
        end
      end
    end
    if k < 0 then break end
  end
  if moved then settle() end
  if dirty then keep(list) elseif gone then redis.call('DEL', fkey) end
  return out
elseif op == 'c' then
  if lt(arg(6), arg(7), nows, nown) or (v and arg(8) ~= ep) then return {0} end
  -- The further windows' slots: each TAT still at the slot's end moves back to its start.
  local given = false
  for i = 3, #KEYS do
    local o = 9 + 4 * (i - 3)
    local x, err = wtat(i)
    if err then return err end
    if x and x[1] == arg(o + 2) and x[2] == arg(o + 3) then
      wsettle(i, arg(o), arg(o + 1))
      given = true
    end
  end
  if not v then return {0} end
  local ps, pn, xs, xn = arg(2), arg(3), arg(4), arg(5)
  if ts == xs and tn == xn then
    local list, err = freed()
    if not list then return err end
    local last = list[#list]
    if last and last[3] == ps and last[4] == pn then
      ps, pn = last[1], last[2]
      list[#list] = nil
      keep(list)
    end
    if lt(nows, nown, ps, pn) then
      store(key, ps, pn, nows, nown)
    else
      redis.call('DEL', key, fkey)
    end
    return {1}
  end
  if not lt(xs, xn, ts, tn) then return {0} end
  if lt(ps, pn, nows, nown) then ps, pn = nows, nown end
  if not lt(ps, pn, xs, xn) then return {0} end
  local list, err = freed()
  if not list then return err end
  local out, placed = {}, false
  for _, s in ipairs(list) do
    if lt(s[3], s[4], ps, pn) then
      out[#out + 1] = s
    elseif lt(xs, xn, s[1], s[2]) then
      if not placed then
        out[#out + 1] = {ps, pn, xs, xn}
        placed = true
      end
      out[#out + 1] = s
    else
      if lt(s[1], s[2], ps, pn) then ps, pn = s[1], s[2] end
      if lt(xs, xn, s[3], s[4]) then xs, xn = s[3], s[4] end
    end
  end
  if not placed then out[#out + 1] = {ps, pn, xs, xn} end
  if #out > MAXFREED then return {0} end
  keep(out)
  return {1}
elseif op == 'a' then
  local xs, xn, p = arg(2), arg(3), arg(4)
  local done, err = reconvert(xs, xn, p)
  if err then return err end
  if done and not lt(nows, nown, ts, tn) then v = nil end
  if not v then return {0, 0, 0, nows, nown} end
  local r = {1, ts, tn, nows, nown}
  if lt(nows, nown, ts, tn) then
    local list, err = freed()
    if not list then return err end
    for _, s in ipairs(list) do
      r[#r + 1], r[#r + 2], r[#r + 3], r[#r + 4] = s[1], s[2], s[3], s[4]
    end
  end
  return r
` + windowOps + `return redis.error_reply('ERR unknown operation')
`

var script = goredis.NewScript(gcraScript)

// badTAT starts the error the script answers for a key whose string value is not a TAT,
// and badSlots the one for a freed-slots key whose value is not a list of slots.
const (
	badTAT   = "BADTAT"
	badSlots = "BADSLOTS"
)

// maxFreed is how many freed slots a limiter's freed-slots key keeps at most (MAXFREED in
// the script).
const maxFreed = 16

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

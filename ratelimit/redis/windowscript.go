package redis

// The script's part for further windows (see gcraScript and windows.go): KEYS[3..] are
// the windows' TAT keys, each holding a bare decimal count of nanoseconds and expiring
// when the window's burst is full again; a window with no key has its whole burst free.
// A window key that holds another type answers WRONGTYPE, one that is not 1 to 24
// decimal digits BADTAT, before anything is written: the keys' data errors.
//
//	'w' reserve with windows: as 'r', each group of requests alike followed by, for each
//	    window, inc = N·T and tol = (Permits-N)·T of the window as pairs (4 numbers). Each
//	    request waits the longest of the waits max(TAT, now) - now - tol of the TAT and
//	    of every window's; refused when more than its maxWait (and so the rest of its k
//	    alike, with the same wait), else every TAT moves to max(TAT, now + wait) + inc.
//	    The freed slots are not taken (a conversion of the rate drops them, as 'r''s).
//	    Returns now, as a pair, then one record of 7 + 2·windows numbers per answer:
//	    {0, k, wait, count, TAT, each window's TAT} for k refused, {1, 1, wait, count,
//	    prev, each window's prev} for one reserved, wait, the TATs and prevs as pairs, prev
//	    being the TAT before (0,0 without one, as a TAT).
//	'c' cancel: ARGV[9..] are, for each window, the reservation's prev and next there, as
//	    pairs: a window whose TAT is still next moves back to prev, after the check of
//	    at and the count, whatever the TAT of Permits per Period does.
//	'v' available with windows: as 'a' (ARGV[2..4], converting the same way); returns
//	    now, the TAT (0,0 without one) and each window's TAT (0,0 without one), as pairs.

// windowHelpers reads and writes the windows' TATs.
const windowHelpers = `
-- wtat returns the TAT of the further window in KEYS[i], as a pair, or nil without one;
-- or nil and the data error's reply.
local function wtat(i)
  local x = redis.pcall('GET', KEYS[i])
  if type(x) == 'table' and x.err then return nil, redis.error_reply(x.err) end
  if not x then return nil end
  if not string.match(x, '^%d+$') or #x > 24 then
    return nil, redis.error_reply('BADTAT ' .. KEYS[i] .. ' does not hold a TAT: a decimal count of nanoseconds')
  end
  local s, n = ns(x)
  return {s, n}
end
-- wsettle writes the further window's TAT in KEYS[i]: stored while ahead of now, else
-- deleted.
local function wsettle(i, s, n)
  if lt(nows, nown, s, n) then
    redis.call('SET', KEYS[i], fmt(s, n), 'PX', px(s, n, nows, nown))
  else
    redis.call('DEL', KEYS[i])
  end
end

`

// windowOps are the script's operations 'w' and 'v'.
const windowOps = `elseif op == 'w' then
  -- Reserves with further windows, in KEYS[3..]: all or none on the TAT and every
  -- window's TAT, the freed slots not used. Each group: as 'r''s, then for each window
  -- its inc and tol as pairs.
  local nw = #KEYS - 2
  local wt = {}
  for i = 1, nw do
    local x, err = wtat(i + 2)
    if err then return err end
    wt[i] = x or {0, 0}
  end
  local out, no, moved, conv = {nows, nown}, 2, false, false
  local g = 10 + 4 * nw
  for j = 2, #ARGV - g + 1, g do
    local ls, ln, mws, mwn = arg(j + 2), arg(j + 3), arg(j + 4), arg(j + 5)
    local k = arg(j + 6)
    local xs, xn, p = arg(j + 7), arg(j + 8), arg(j + 9)
    if differs(xs, xn, p) then
      if rs and v and lt(nows, nown, ts, tn) then
        local list, err = freed()
        if not list then return err end
        convert(list, xs, xn, p)
        ep, moved, conv = ep + 1, true, true
      end
      rs, rn, rp = xs, xn, p
    end
    while k > 0 do
      local bs, bn = nows, nown
      if v and lt(nows, nown, ts, tn) then bs, bn = ts, tn end
      local ws, wn = norm(bs - nows - ls, bn - nown - ln)
      for i = 1, nw do
        local o = j + 10 + 4 * (i - 1)
        local cs, cn = nows, nown
        if lt(nows, nown, wt[i][1], wt[i][2]) then cs, cn = wt[i][1], wt[i][2] end
        local us, un = norm(cs - nows - arg(o + 2), cn - nown - arg(o + 3))
        if lt(ws, wn, us, un) then ws, wn = us, un end
      end
      out[no + 1], out[no + 2], out[no + 5] = 0, k, ep
      if lt(mws, mwn, ws, wn) then
        out[no + 3], out[no + 4] = ws, wn
        out[no + 6], out[no + 7] = 0, 0
        if v then out[no + 6], out[no + 7] = ts, tn end
        for i = 1, nw do out[no + 6 + 2 * i], out[no + 7 + 2 * i] = wt[i][1], wt[i][2] end
        k = 0
      else
        if ws < 0 then ws, wn = 0, 0 end
        local as, an = norm(nows + ws, nown + wn)
        out[no + 1], out[no + 2], out[no + 3], out[no + 4] = 1, 1, ws, wn
        out[no + 6], out[no + 7] = ts, tn
        if lt(ts, tn, as, an) then ts, tn = as, an end
        ts, tn = norm(ts + arg(j), tn + arg(j + 1))
        v, moved = true, true
        for i = 1, nw do
          local o = j + 10 + 4 * (i - 1)
          local c = wt[i]
          out[no + 6 + 2 * i], out[no + 7 + 2 * i] = c[1], c[2]
          local cs, cn = c[1], c[2]
          if lt(cs, cn, as, an) then cs, cn = as, an end
          cs, cn = norm(cs + arg(o), cn + arg(o + 1))
          wt[i] = {cs, cn}
        end
        k = k - 1
      end
      no = no + 7 + 2 * nw
    end
  end
  if moved then settle() end
  if conv then keep({}) end
  if moved then
    for i = 1, nw do wsettle(i + 2, wt[i][1], wt[i][2]) end
  end
  return out
elseif op == 'v' then
  -- The available permits with further windows: the TAT (0, 0 without one) and each
  -- window's, after the conversion of 'a', with now first.
  local xs, xn, p = arg(2), arg(3), arg(4)
  local _, err = reconvert(xs, xn, p)
  if err then return err end
  local r = {nows, nown, 0, 0}
  if v then r[3], r[4] = ts, tn end
  for i = 3, #KEYS do
    local x, err = wtat(i)
    if err then return err end
    x = x or {0, 0}
    r[#r + 1], r[#r + 2] = x[1], x[2]
  end
  return r
end
`

local typ, data = ARGV[2], ARGV[3]
if #typ == 0 or #typ > 64 or string.find(typ, '[^a-z0-9._-]') then
  return redis.error_reply('ERR invalid event type')
end
if typ == 'reset' or typ == 'auth-expired' or typ == 'presence' or typ == 'health' then
  return redis.error_reply('ERR reserved event type')
end
local maxLen, maxBytes, minID = ARGV[4] or '', ARGV[5] or '', ARGV[6] or ''
if maxLen == '' then maxLen = '10000' end
if maxBytes == '' then maxBytes = '65536' end
if #data > tonumber(maxBytes) then
  return redis.error_reply('ERR event too large')
end
local ok, obj, decodeErr = pcall(cjson.decode, data)
if not ok or decodeErr then
  return redis.error_reply('ERR data is not valid JSON')
end
local idem, digest = KEYS[3], nil
if idem then
  local who = ARGV[8] or ''
  local base = string.sub(KEYS[1], 1, -7) .. 'idem:' .. (string.gsub(who, '[%%:]', {['%'] = '%25', [':'] = '%3A'})) .. ':'
  local ttl = tonumber(ARGV[7])
  if #who > 1024 or #idem <= #base or #idem > #base + 255 or string.sub(idem, 1, #base) ~= base or
    string.find(idem, '[^!-~]', #base + 1) then
    return redis.error_reply('ERR invalid idempotency key')
  end
  if not ttl or ttl < 1 or ttl > 86400000 then
    return redis.error_reply('ERR invalid idempotency ttl')
  end
  digest = redis.sha1hex(typ .. '\n' .. data)
  local first = redis.call('GET', idem)
  if first then
    local firstID, firstDigest = string.match(first, '^(%S+) (%x+)$')
    if firstDigest ~= digest then
      return redis.error_reply('ERR idempotency key reused with other content')
    end
    return {firstID, 1}
  end
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local prev = '0-0'
if last[1] then prev = last[1][1] end
local tp, hex = ARGV[9] or '', '[0-9a-f]'
if #tp ~= 55 or not string.find(tp, '^' .. string.rep(hex, 2) .. '%-' .. string.rep(hex, 32) .. '%-' .. string.rep(hex, 16) ..
  '%-' .. string.rep(hex, 2) .. '$') or string.sub(tp, 1, 2) == 'ff' or string.sub(tp, 4, 35) == string.rep('0', 32) or
  string.sub(tp, 37, 52) == string.rep('0', 16) or (string.sub(tp, 1, 2) == '00' and tonumber(string.sub(tp, 54), 16) > 3) then
  tp = ''
end
local id, trace
if tp == '' then
  id, trace = redis.call('XADD', KEYS[1], 'MAXLEN', '~', maxLen, '*', 'p', prev, 't', typ, 'd', data), ''
else
  id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', maxLen, '*', 'p', prev, 't', typ, 'd', data, 'tp', tp)
  trace = '"trace":"' .. tp .. '",'
end
if minID ~= '' then
  redis.call('XTRIM', KEYS[1], 'MINID', '~', minID)
end
local env = '{"id":"' .. id .. '","prev":"' .. prev .. '","type":"' .. typ .. '",' .. trace .. '"data":' .. data .. '}'
redis.call('PUBLISH', ARGV[1], env)
local fields = {'_cursor', id}
if type(obj) == 'table' then
  if typ == 'lock' and type(obj.key) == 'string' then
    table.insert(fields, 'lock:' .. obj.key)
    table.insert(fields, env)
    if type(obj.workflow) == 'string' then
      table.insert(fields, 'wflock:' .. obj.workflow)
      table.insert(fields, env)
    end
    if type(obj.fence) == 'number' then
      local top = tonumber(redis.call('HGET', KEYS[2], 'fence:' .. obj.key))
      if top and obj.fence < top then
        table.insert(fields, 'fencelow:' .. obj.key)
        table.insert(fields, env)
      elseif not top or obj.fence > top then
        table.insert(fields, 'fence:' .. obj.key)
        table.insert(fields, string.format('%.0f', obj.fence))
      end
    end
  elseif typ == 'health' and type(obj.workflow) == 'string' then
    table.insert(fields, 'verdict:' .. obj.workflow)
    table.insert(fields, env)
  elseif typ == 'progress' and type(obj.workflow) == 'string' then
    table.insert(fields, 'wf:' .. obj.workflow)
    table.insert(fields, env)
    redis.call('HSETNX', KEYS[2], 'wfstart:' .. obj.workflow, id)
  end
end
redis.call('HSET', KEYS[2], unpack(fields))
local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
if first then
  local oms, oseq = string.match(first[1], '^(%d+)-(%d+)$')
  oms, oseq = tonumber(oms), tonumber(oseq)
  local scan = redis.call('HSCAN', KEYS[2], redis.call('HGET', KEYS[2], '_trim') or '0', 'COUNT', 20)
  for i = 1, #scan[2], 2 do
    local k, v = scan[2][i], scan[2][i + 1]
    local ms, seq = string.match(v, '^{"id":"(%d+)-(%d+)"')
    local prefix, name = string.match(k, '^(%a+):(.*)$')
    local gone = false
    if ms then
      ms, seq = tonumber(ms), tonumber(seq)
      gone = ms < oms or (ms == oms and seq < oseq)
    elseif prefix == 'fence' then
      gone = redis.call('HEXISTS', KEYS[2], 'lock:' .. name) == 0 and redis.call('HEXISTS', KEYS[2], 'fencelow:' .. name) == 0
    elseif prefix then
      gone = redis.call('HEXISTS', KEYS[2], 'wf:' .. name) == 0 and redis.call('HEXISTS', KEYS[2], 'wflock:' .. name) == 0 and
        redis.call('HEXISTS', KEYS[2], 'verdict:' .. name) == 0
    end
    if gone then
      redis.call('HDEL', KEYS[2], k)
    end
  end
  redis.call('HSET', KEYS[2], '_trim', scan[1])
end
if idem then
  redis.call('SET', idem, id .. ' ' .. digest, 'PX', ARGV[7])
  return {id, 0}
end
return id

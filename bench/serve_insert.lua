-- serve_insert.lua - wrk script: durable check-and-insert of short texts,
-- POST /v1/documents {"id", "text", "check": true, "k": 3}, a new id per
-- request (thread number and counter), texts of 8 to 12 words.
local counter = 0
local threads = 0
local words = { "river", "stone", "light", "paper", "signal", "garden", "window", "market",
  "silver", "engine", "harbor", "letter", "winter", "forest", "bridge", "candle" }

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

function init(args)
  tid = tid or 0
  math.randomseed(1000 + tid)
end

function request()
  counter = counter + 1
  local t = {}
  for j = 1, 8 + (counter % 5) do
    t[j] = words[math.random(#words)]
  end
  local body = '{"id":"w' .. tid .. '-' .. counter .. '","text":"' .. table.concat(t, " ") ..
    ' ' .. counter .. '","check":true,"k":3}'
  return wrk.format("POST", "/v1/documents", { ["Content-Type"] = "application/json" }, body)
end

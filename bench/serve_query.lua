-- serve_query.lua - wrk script: POST /v1/query by fingerprint, k = 3, the
-- fingerprints read from the file named by PROBES (near stored ones), a
-- different one per request.
local probes = {}
local n = 0
local i = 0

function init(args)
  for line in io.lines(os.getenv("PROBES")) do
    n = n + 1
    probes[n] = line
  end
  i = math.random(n)
end

function request()
  i = i % n + 1
  return wrk.format("POST", "/v1/query", { ["Content-Type"] = "application/json" },
    '{"fingerprint":"' .. probes[i] .. '","k":3}')
end

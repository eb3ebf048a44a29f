-- wrk script for the iceguard benchmark: the method and an optional body file come from the
-- environment (BENCH_METHOD, BENCH_BODY); at the end one line "BENCH_RESULT {json}" carries the
-- counts and the latency percentiles in µs, which the runner parses.
local method = os.getenv("BENCH_METHOD")
local body_path = os.getenv("BENCH_BODY")
if method ~= nil and method ~= "" then wrk.method = method end
if body_path ~= nil and body_path ~= "" then
  local f = assert(io.open(body_path, "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.headers["Content-Type"] = "application/json"
end

-- BENCH_OPENER (a URL): the first request of each connection GETs it, as PyIceberg's session and
-- iceberg-js open theirs with GET /v1/config. wrk asks each thread for the first request of each
-- of its connections as they open, before any other; those answers count as requests too (one
-- per connection, against thousands measured).
local opener = os.getenv("BENCH_OPENER")
if opener ~= nil and opener ~= "" then
  local path = opener:gsub("^https?://[^/]+", "")
  local per_thread = tonumber(os.getenv("BENCH_OPENER_PER_THREAD")) or 1
  local opened = 0
  local plain = nil
  request = function()
    if opened < per_thread then
      opened = opened + 1
      -- An empty body: with nil, wrk.format would send the POST body of the workload on this GET.
      return wrk.format("GET", path, {}, "")
    end
    plain = plain or wrk.format()
    return plain
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"durationUs":%d,"bytes":%d,"socketErrors":%d,"non2xx":%d,"timeouts":%d,' ..
    '"latencyUs":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect + e.read + e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end

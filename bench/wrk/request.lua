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

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"durationUs":%d,"bytes":%d,"socketErrors":%d,"non2xx":%d,"timeouts":%d,' ..
    '"latencyUs":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect + e.read + e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end

-- wrk script of the hot-path bench: sends the requests listed in $BENCH_REQUESTS (one per line:
-- method, path, API key and JSON body, tab-separated) in turn, and prints a JSON summary.
local list = {}
local count = 0
local next_index = 0

function init(args)
  for line in io.lines(os.getenv("BENCH_REQUESTS")) do
    local method, path, key, body = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
    local headers = { ["Authorization"] = "Key " .. key }
    if body == "" then
      body = nil
    else
      headers["Content-Type"] = "application/json"
    end
    count = count + 1
    list[count] = wrk.format(method, path, headers, body)
  end
end

function request()
  next_index = next_index % count + 1
  return list[next_index]
end

function done(summary, latency, requests)
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f,' ..
    '"non2xx":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, latency.mean, summary.errors.status, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.timeout))
end

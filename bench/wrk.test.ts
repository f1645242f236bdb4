import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseWrkOutput } from './wrk.js';

// wrk 4.1.0's report, run with --latency (captured on this machine).
const REPORT = `Running 2s test @ http://127.0.0.1:18777/
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.93ms    2.21ms  23.78ms   87.15%
    Req/Sec     1.48k   285.59     1.93k    70.00%
  Latency Distribution
     50%  981.00us
     75%    3.24ms
     90%    5.59ms
     99%    1.21s
  2956 requests in 2.00s, 2.97MB read
  Socket errors: connect 0, read 2, write 0, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:   1476.52
Transfer/sec:      1.49MB
`;

test("wrk's --latency report: percentiles in milliseconds whatever its unit, rate, errors", () => {
  assert.deepEqual(parseWrkOutput(REPORT), {
    requests: 2956,
    seconds: 2,
    requestsPerSecond: 1476.52,
    p50Ms: 0.981,
    p75Ms: 3.24,
    p90Ms: 5.59,
    p99Ms: 1210,
    non2xx: 7,
    socketErrors: 5,
  });
  assert.throws(
    () => parseWrkOutput(REPORT.replace(/ {2}Latency Distribution[\s\S]*?99%.*\n/, '')),
    /--latency/,
  );
});

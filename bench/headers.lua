-- wrk: every request another Authorization header, read from the file named by BENCH_HEADERS
-- (a flood of different wrong passwords, each of which needs its own hash check).
local headers = {}
for line in io.lines(os.getenv("BENCH_HEADERS")) do headers[#headers + 1] = line end
local i = 0
request = function()
  i = i % #headers + 1
  return wrk.format("GET", nil, { ["Authorization"] = headers[i] })
end

-- wrk: every request a different search, read from the file named by BENCH_PATHS.
local paths = {}
for line in io.lines(os.getenv("BENCH_PATHS")) do paths[#paths + 1] = line end
wrk.headers["Authorization"] = os.getenv("BENCH_AUTH")
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end

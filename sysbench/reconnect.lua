#!/usr/bin/env sysbench
-- ---------------------------------------------------------------------------
-- reconnect.lua: run one of sysbench 1.0's stock OLTP workloads with a new
-- connection every --reconnect=N events (kewpie).
--
-- sysbench 1.1 has --reconnect; Debian's sysbench 1.0.20 has neither the
-- option nor a working con:reconnect() (it crashes).  This wrapper loads the
-- workload named by --workload and, before every N-th event of a thread,
-- closes its prepared statements, disconnects, connects again and prepares
-- them again: "open/close per N transactions" against a persistent
-- connection (--reconnect=0, the default, changes nothing).  At the end it
-- prints how many reconnects the run made (sysbench's own "reconnects" line
-- counts only reconnects after lost connections).
--
--   sysbench reconnect.lua --workload=oltp_point_select --reconnect=1 \
--            --mysql-user=root --tables=4 --table-size=10000 --threads=8 --time=30 run
-- ---------------------------------------------------------------------------

local ffi = require("ffi")

ffi.cdef [[
int setenv(const char *name, const char *value, int overwrite);
int getpid(void);
void *calloc(size_t nmemb, size_t size);
]]

local SHM_ENV = "KEWPIE_RECONNECT_STATS"

local workload = nil
for _, arg in ipairs(sysbench.cmdline.argv) do
   workload = arg:match("^%-%-workload=(.+)$") or workload
end
if workload == nil then
   error("reconnect.lua needs --workload=NAME (a sysbench Lua workload, e.g. oltp_read_write)")
end
local path = workload:match("%.lua$") and workload or package.searchpath(workload, package.path)
if path == nil then
   error("reconnect.lua: no sysbench workload " .. workload)
end
dofile(path)

sysbench.cmdline.options = sysbench.cmdline.options or {}
sysbench.cmdline.options.workload = {"The sysbench workload to run (name or .lua path)", ""}
sysbench.cmdline.options.reconnect = {"Reconnect after every N events (0: keep the connection)", 0}

-- One counter per thread in C memory the main state allocates in init() and
-- sums in done() (each Lua state of sysbench is separate).
local counts = nil

local workload_init, workload_done = init, done

function init()
   if workload_init then workload_init() end
   local mem = ffi.C.calloc(sysbench.opt.threads, ffi.sizeof("double"))
   assert(mem ~= nil, "cannot allocate the reconnect counters")
   ffi.C.setenv(SHM_ENV, string.format("%d:%d", ffi.C.getpid(),
                                        tonumber(ffi.cast("uintptr_t", mem))), 1)
   counts = ffi.cast("double *", mem)
end

local function counts_from_env()
   local value = os.getenv(SHM_ENV)
   if value == nil then return nil end
   local pid, addr = value:match("^(%d+):(%d+)$")
   if tonumber(pid) ~= ffi.C.getpid() then return nil end
   return ffi.cast("double *", ffi.cast("uintptr_t", tonumber(addr)))
end

local workload_thread_init = thread_init
function thread_init(...)
   counts = counts_from_env()
   return workload_thread_init(...)
end

local function new_connection()
   if close_statements then close_statements() end
   con:disconnect()
   con = drv:connect()
   if prepare_statements and stmt ~= nil then
      stmt, param = {}, {}
      for t = 1, (sysbench.opt.tables or 1) do
         stmt[t], param[t] = {}, {}
      end
      prepare_statements()
   end
end

local events = 0
local workload_event = event
function event(...)
   local every = tonumber(sysbench.opt.reconnect) or 0
   if every > 0 and events > 0 and events % every == 0 then
      new_connection()
      if counts ~= nil then counts[sysbench.tid] = counts[sysbench.tid] + 1 end
   end
   events = events + 1
   return workload_event(...)
end

function done()
   if workload_done then workload_done() end
   if sysbench.cmdline.command ~= "run" or counts == nil then return end
   local total = 0
   for tid = 0, sysbench.opt.threads - 1 do total = total + counts[tid] end
   print(string.format("kewpie reconnect: %d reconnects (a new connection every %d events)",
                       total, tonumber(sysbench.opt.reconnect) or 0))
end

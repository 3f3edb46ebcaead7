#!/usr/bin/env sysbench
-- ---------------------------------------------------------------------------
-- tpcc_like.lua: a TPC-C-like workload for sysbench 1.0 (kewpie).
--
-- Written for kewpie from the TPC Benchmark C specification (revision 5.11):
-- its nine tables, its five transactions (New-Order, Payment, Order-Status,
-- Delivery, Stock-Level) in the mix 45/43/4/4/4, warehouses as the scale
-- factor, and its consistency conditions, checked by the `check` command.
--
-- This is NOT a TPC-C benchmark and its figures are not TPC-C results: there
-- are no terminals, keying or think times, no response-time constraints, the
-- Delivery transaction runs inline, the mix is drawn at random per event, and
-- the cardinalities can be scaled down (--items, --customers).  "tpmC-like" is
-- the number of New-Order transactions completed per minute of the run (the 1%
-- that roll back by design included; the statistics show how many).
--
-- Commands:
--   prepare   create the tables and load --warehouses warehouses (in parallel
--             with --threads: thread 0 loads the items, warehouse w goes to
--             thread (w - 1) % threads)
--   run       the five transactions; at the end a "TPC-C-like statistics"
--             block: New-Order per minute and each transaction's count,
--             rollbacks, retries and latency (avg, 50/95/99th percentile, max)
--   check     the consistency conditions; exits non-zero if one fails
--   cleanup   drop the tables
--
--   sysbench tpcc_like.lua --mysql-user=root --mysql-db=tpcc --warehouses=2 prepare
--   sysbench tpcc_like.lua --mysql-user=root --mysql-db=tpcc --warehouses=2 \
--            --threads=8 --time=60 --report-interval=1 run
--   sysbench tpcc_like.lua --mysql-user=root --mysql-db=tpcc --warehouses=2 check
-- ---------------------------------------------------------------------------

local ffi = require("ffi")
local bit = require("bit")

ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } kw_tpcc_timespec;
int clock_gettime(int clk_id, kw_tpcc_timespec *tp);
int setenv(const char *name, const char *value, int overwrite);
int getpid(void);
void *calloc(size_t nmemb, size_t size);
]]

sysbench.cmdline.options = {
   warehouses = {"Warehouses: the scale factor", 1},
   items = {"Rows of ITEM and, per warehouse, of STOCK (the specification: 100000)", 100000},
   customers = {"Customers, and initial orders, per district (the specification: 3000)", 3000},
   mysql_storage_engine = {"Storage engine of the tables", "innodb"},
   reconnect = {"Reconnect after every N transactions (0: keep the connection)", 0},
   check_only = {"With check: only these conditions, a comma list (default: all)", ""},
}

sysbench.cmdline.commands = {
   prepare = {function() return cmd_prepare() end, sysbench.cmdline.PARALLEL_COMMAND},
   check = {function() return cmd_check() end},
}

-- ------------------------------------------------------------------ constants
local DISTRICTS = 10
local TXN_NAMES = {"new_order", "payment", "order_status", "delivery", "stock_level"}
local MIX = {45, 43, 4, 4, 4}          -- percent, in TXN_NAMES order
local SYLLABLES = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY",
                   "ATION", "EING"}
-- NURand's C constants (clause 2.1.6): the run's C for C_LAST differs from the
-- load's by 66, inside the allowed 65..119 and not 96 or 112.
local C_LAST_LOAD, C_LAST_RUN, C_ID, C_OL_I_ID = 157, 223, 259, 7911

-- Latency histogram per transaction type: sysbench's own layout (1024 buckets,
-- logarithmic from 0.001 ms to 100000 ms), kept per thread in C memory that
-- the main Lua state allocates in init() and sums in done().
local BUCKETS = 1024
local HIST_MIN, HIST_MAX = 0.001, 100000.0
local HIST_MULT = (BUCKETS - 1) / (math.log(HIST_MAX) - math.log(HIST_MIN))
local SLOT_HEAD = 8  -- ok, rollbacks, retries, sum_ms, max_ms, first_s, last_s, reconnects
local SLOT = SLOT_HEAD + BUCKETS
local SHM_ENV = "KEWPIE_TPCC_LIKE_STATS"

-- ------------------------------------------------------------------ helpers
local function now_s()
   local ts = ffi.new("kw_tpcc_timespec")
   ffi.C.clock_gettime(1, ts)  -- CLOCK_MONOTONIC
   return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
end

local function rnd(lo, hi)
   return sysbench.rand.uniform(lo, hi)
end

local function nurand(a, x, y, c)
   return (bit.bor(rnd(0, a), rnd(x, y)) + c) % (y - x + 1) + x
end

local function astring(lo, hi)  -- random letters, length lo..hi
   return sysbench.rand.string(string.rep("@", rnd(lo, hi)))
end

local function nstring(n)  -- random digits
   return sysbench.rand.string(string.rep("#", n))
end

local function zip()
   return nstring(4) .. "11111"
end

local function last_name(n)
   return SYLLABLES[math.floor(n / 100) + 1] .. SYLLABLES[math.floor(n / 10) % 10 + 1] ..
          SYLLABLES[n % 10 + 1]
end

local function with_original(s)  -- 10% of I_DATA / S_DATA contain "ORIGINAL"
   if rnd(1, 10) == 1 then
      local at = rnd(1, #s - 8 + 1)
      return s:sub(1, at - 1) .. "ORIGINAL" .. s:sub(at + 8)
   end
   return s
end

local function money(lo_cents, hi_cents)
   return string.format("%.2f", rnd(lo_cents, hi_cents) / 100)
end

local function opt_int(name)
   return tonumber(sysbench.opt[name])
end

local function new_per_district()  -- 900 of 3000 initial orders are undelivered
   return math.floor(opt_int("customers") * 900 / 3000)
end

-- ------------------------------------------------------------------ schema
local function engine_clause()
   return "ENGINE=" .. sysbench.opt.mysql_storage_engine
end

local TABLES = {
   {"warehouse", [[w_id SMALLINT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20),
      w_street_2 VARCHAR(20), w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9),
      w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2), PRIMARY KEY (w_id)]]},
   {"district", [[d_id TINYINT NOT NULL, d_w_id SMALLINT NOT NULL, d_name VARCHAR(10),
      d_street_1 VARCHAR(20), d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2),
      d_zip CHAR(9), d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INT,
      PRIMARY KEY (d_w_id, d_id)]]},
   {"customer", [[c_id INT NOT NULL, c_d_id TINYINT NOT NULL, c_w_id SMALLINT NOT NULL,
      c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20),
      c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9),
      c_phone CHAR(16), c_since DATETIME, c_credit CHAR(2), c_credit_lim DECIMAL(12,2),
      c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2),
      c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR(500),
      PRIMARY KEY (c_w_id, c_d_id, c_id), KEY idx_customer_name (c_w_id, c_d_id, c_last, c_first)]]},
   -- HISTORY has no primary key in the specification; engines and Galera want one.
   {"history", [[h_id BIGINT NOT NULL AUTO_INCREMENT, h_c_id INT, h_c_d_id TINYINT,
      h_c_w_id SMALLINT, h_d_id TINYINT, h_w_id SMALLINT, h_date DATETIME,
      h_amount DECIMAL(6,2), h_data VARCHAR(24), PRIMARY KEY (h_id),
      KEY idx_history_customer (h_c_w_id, h_c_d_id, h_c_id), KEY idx_history_district (h_w_id, h_d_id)]]},
   {"new_orders", [[no_o_id INT NOT NULL, no_d_id TINYINT NOT NULL, no_w_id SMALLINT NOT NULL,
      PRIMARY KEY (no_w_id, no_d_id, no_o_id)]]},
   {"orders", [[o_id INT NOT NULL, o_d_id TINYINT NOT NULL, o_w_id SMALLINT NOT NULL,
      o_c_id INT, o_entry_d DATETIME, o_carrier_id TINYINT, o_ol_cnt TINYINT,
      o_all_local TINYINT, PRIMARY KEY (o_w_id, o_d_id, o_id),
      KEY idx_orders_customer (o_w_id, o_d_id, o_c_id, o_id)]]},
   {"order_line", [[ol_o_id INT NOT NULL, ol_d_id TINYINT NOT NULL, ol_w_id SMALLINT NOT NULL,
      ol_number TINYINT NOT NULL, ol_i_id INT, ol_supply_w_id SMALLINT, ol_delivery_d DATETIME,
      ol_quantity TINYINT, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24),
      PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)]]},
   {"item", [[i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2),
      i_data VARCHAR(50), PRIMARY KEY (i_id)]]},
   {"stock", [[s_i_id INT NOT NULL, s_w_id SMALLINT NOT NULL, s_quantity SMALLINT,
      s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24),
      s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24),
      s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd DECIMAL(8,0), s_order_cnt SMALLINT,
      s_remote_cnt SMALLINT, s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id)]]},
}

local function connect()
   local drv = sysbench.sql.driver()
   return drv, drv:connect()
end

local function create_tables(con)
   for _, t in ipairs(TABLES) do
      con:query(string.format("CREATE TABLE IF NOT EXISTS %s (%s) %s", t[1], t[2],
                              engine_clause()))
   end
end

-- ------------------------------------------------------------------ loading
local BATCH = 500

local function bulk(con, head, rows_fn, n)
   con:bulk_insert_init(head)
   for i = 1, n do
      con:bulk_insert_next(rows_fn(i))
      if i % BATCH == 0 then
         con:bulk_insert_done()
         con:bulk_insert_init(head)
      end
   end
   con:bulk_insert_done()
end

local function load_items(con)
   print("tpcc-like: loading " .. opt_int("items") .. " items")
   bulk(con, "INSERT INTO item VALUES", function(i)
      return string.format("(%d,%d,'%s',%s,'%s')", i, rnd(1, 10000), astring(14, 24),
                           money(100, 10000), with_original(astring(26, 50)))
   end, opt_int("items"))
end

local function load_warehouse(con, w)
   local customers, items = opt_int("customers"), opt_int("items")
   local d_ytd = customers * 10           -- each customer's one 10.00 payment
   print(string.format("tpcc-like: loading warehouse %d", w))
   con:query(string.format(
      "INSERT INTO warehouse VALUES (%d,'%s','%s','%s','%s','%s','%s',%s,%d.00)",
      w, astring(6, 10), astring(10, 20), astring(10, 20), astring(10, 20), astring(2, 2),
      zip(), string.format("%.4f", rnd(0, 2000) / 10000), d_ytd * DISTRICTS))
   bulk(con, "INSERT INTO stock VALUES", function(i)
      local dists = {}
      for d = 1, DISTRICTS do dists[d] = "'" .. astring(24, 24) .. "'" end
      return string.format("(%d,%d,%d,%s,0,0,0,'%s')", i, w, rnd(10, 100),
                           table.concat(dists, ","), with_original(astring(26, 50)))
   end, items)
   local new_orders = new_per_district()
   local delivered = customers - new_orders
   for d = 1, DISTRICTS do
      con:query(string.format(
         "INSERT INTO district VALUES (%d,%d,'%s','%s','%s','%s','%s','%s',%s,%d.00,%d)",
         d, w, astring(6, 10), astring(10, 20), astring(10, 20), astring(10, 20),
         astring(2, 2), zip(), string.format("%.4f", rnd(0, 2000) / 10000), d_ytd,
         customers + 1))
      bulk(con, "INSERT INTO customer VALUES", function(c)
         local name = c <= 1000 and last_name(c - 1) or
                      last_name(nurand(255, 0, 999, C_LAST_LOAD))
         return string.format(
            "(%d,%d,%d,'%s','OE','%s','%s','%s','%s','%s','%s','%s',NOW(),'%s',50000.00,%s," ..
            "-10.00,10.00,1,0,'%s')",
            c, d, w, astring(8, 16), name, astring(10, 20), astring(10, 20), astring(10, 20),
            astring(2, 2), zip(), nstring(16), rnd(1, 10) == 1 and "BC" or "GC",
            string.format("%.4f", rnd(0, 5000) / 10000), astring(300, 500))
      end, customers)
      bulk(con, "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, " ..
                "h_amount, h_data) VALUES", function(c)
         return string.format("(%d,%d,%d,%d,%d,NOW(),10.00,'%s')", c, d, w, d, w,
                              astring(12, 24))
      end, customers)
      -- Orders: a random permutation of the customers, one order each.
      local perm = {}
      for i = 1, customers do perm[i] = i end
      for i = customers, 2, -1 do
         local j = rnd(1, i)
         perm[i], perm[j] = perm[j], perm[i]
      end
      local counts = {}
      bulk(con, "INSERT INTO orders VALUES", function(o)
         counts[o] = rnd(5, 15)
         local carrier = o <= delivered and tostring(rnd(1, 10)) or "NULL"
         return string.format("(%d,%d,%d,%d,NOW(),%s,%d,1)", o, d, w, perm[o], carrier,
                              counts[o])
      end, customers)
      con:bulk_insert_init("INSERT INTO order_line VALUES")
      local n = 0
      for o = 1, customers do
         for l = 1, counts[o] do
            local done_ = o <= delivered
            con:bulk_insert_next(string.format("(%d,%d,%d,%d,%d,%d,%s,5,%s,'%s')",
               o, d, w, l, rnd(1, items), w, done_ and "NOW()" or "NULL",
               done_ and "0.00" or money(1, 999999), astring(24, 24)))
            n = n + 1
            if n % BATCH == 0 then
               con:bulk_insert_done()
               con:bulk_insert_init("INSERT INTO order_line VALUES")
            end
         end
      end
      con:bulk_insert_done()
      bulk(con, "INSERT INTO new_orders VALUES", function(i)
         return string.format("(%d,%d,%d)", delivered + i, d, w)
      end, new_orders)
   end
end

function cmd_prepare()
   local _, con = connect()
   create_tables(con)
   local threads = sysbench.opt.threads
   if sysbench.tid == 0 then
      load_items(con)
   end
   for w = 1, opt_int("warehouses") do
      if (w - 1) % threads == sysbench.tid then
         load_warehouse(con, w)
      end
   end
   con:disconnect()
end

function cleanup()
   local _, con = connect()
   for _, t in ipairs(TABLES) do
      print("tpcc-like: dropping table " .. t[1])
      con:query("DROP TABLE IF EXISTS " .. t[1])
   end
   con:disconnect()
end

-- ------------------------------------------------------------------ consistency
-- The specification's consistency conditions (clause 3.3.2), each as a query
-- counting the rows (warehouses, districts, orders, customers) that break it.
-- A district whose NEW-ORDER rows were all delivered has no max(NO_O_ID):
-- condition 2 then compares D_NEXT_O_ID - 1 with max(O_ID) only (a scaled-down
-- load starts with few undelivered orders, and Delivery can empty a district).
-- Condition 11 holds only on a freshly loaded database (Delivery changes it):
-- it is checked when no Delivery has run yet, i.e. when no order delivered
-- after the load exists (o_carrier_id set on an order above the load's ones).
local CONDITIONS = {
   {1, "W_YTD = sum(D_YTD)", [[SELECT COUNT(*) FROM warehouse w JOIN
      (SELECT d_w_id, SUM(d_ytd) s FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id
      WHERE w.w_ytd <> d.s]]},
   {2, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)", [[SELECT COUNT(*) FROM district d
      LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) m FROM orders GROUP BY o_w_id, o_d_id) o
        ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id
      LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) m FROM new_orders
                 GROUP BY no_w_id, no_d_id) n ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id
      WHERE NOT (d.d_next_o_id - 1 <=> o.m AND (n.m IS NULL OR o.m <=> n.m))]]},
   {3, "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER", [[SELECT COUNT(*) FROM
      (SELECT MAX(no_o_id) - MIN(no_o_id) + 1 span, COUNT(*) n FROM new_orders
       GROUP BY no_w_id, no_d_id) x WHERE span <> n]]},
   {4, "sum(O_OL_CNT) = rows in ORDER-LINE", [[SELECT COUNT(*) FROM
      (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) s FROM orders GROUP BY o_w_id, o_d_id) o
      LEFT JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) n FROM order_line
                 GROUP BY ol_w_id, ol_d_id) l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
      WHERE NOT (o.s <=> l.n)]]},
   {5, "O_CARRIER_ID is null exactly for orders in NEW-ORDER", [[SELECT COUNT(*) FROM orders o
      LEFT JOIN new_orders n ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id
        AND n.no_o_id = o.o_id
      WHERE (o.o_carrier_id IS NULL) <> (n.no_o_id IS NOT NULL)]]},
   {6, "O_OL_CNT = the order's ORDER-LINE rows", [[SELECT COUNT(*) FROM orders o
      LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) n FROM order_line
                 GROUP BY ol_w_id, ol_d_id, ol_o_id) l
        ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id
      WHERE NOT (o.o_ol_cnt <=> l.n)]]},
   {7, "OL_DELIVERY_D is null exactly when O_CARRIER_ID is null", [[SELECT COUNT(*) FROM
      order_line l JOIN orders o ON o.o_w_id = l.ol_w_id AND o.o_d_id = l.ol_d_id
        AND o.o_id = l.ol_o_id
      WHERE (l.ol_delivery_d IS NULL) <> (o.o_carrier_id IS NULL)]]},
   {8, "W_YTD = sum(H_AMOUNT)", [[SELECT COUNT(*) FROM warehouse w LEFT JOIN
      (SELECT h_w_id, SUM(h_amount) s FROM history GROUP BY h_w_id) h ON h.h_w_id = w.w_id
      WHERE NOT (w.w_ytd <=> h.s)]]},
   {9, "D_YTD = sum(H_AMOUNT)", [[SELECT COUNT(*) FROM district d LEFT JOIN
      (SELECT h_w_id, h_d_id, SUM(h_amount) s FROM history GROUP BY h_w_id, h_d_id) h
        ON h.h_w_id = d.d_w_id AND h.h_d_id = d.d_id
      WHERE NOT (d.d_ytd <=> h.s)]]},
   {10, "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)", [[SELECT COUNT(*) FROM
      customer c
      LEFT JOIN (SELECT o.o_w_id w, o.o_d_id d, o.o_c_id c, SUM(l.ol_amount) s FROM orders o
                 JOIN order_line l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
                   AND l.ol_o_id = o.o_id
                 WHERE l.ol_delivery_d IS NOT NULL GROUP BY o.o_w_id, o.o_d_id, o.o_c_id) ol
        ON ol.w = c.c_w_id AND ol.d = c.c_d_id AND ol.c = c.c_id
      LEFT JOIN (SELECT h_c_w_id w, h_c_d_id d, h_c_id c, SUM(h_amount) s FROM history
                 GROUP BY h_c_w_id, h_c_d_id, h_c_id) h
        ON h.w = c.c_w_id AND h.d = c.c_d_id AND h.c = c.c_id
      WHERE c.c_balance <> COALESCE(ol.s, 0) - COALESCE(h.s, 0)]]},
   {11, "rows in ORDER - rows in NEW-ORDER = the load's delivered orders (before any Delivery)",
    [[SELECT COUNT(*) FROM (SELECT o_w_id, o_d_id, COUNT(*) n FROM orders
      GROUP BY o_w_id, o_d_id) o LEFT JOIN (SELECT no_w_id, no_d_id, COUNT(*) n
      FROM new_orders GROUP BY no_w_id, no_d_id) n ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id
      WHERE o.n - COALESCE(n.n, 0) <> %d]]},
   {12, "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)", [[SELECT COUNT(*) FROM
      customer c
      LEFT JOIN (SELECT o.o_w_id w, o.o_d_id d, o.o_c_id c, SUM(l.ol_amount) s FROM orders o
                 JOIN order_line l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
                   AND l.ol_o_id = o.o_id
                 WHERE l.ol_delivery_d IS NOT NULL GROUP BY o.o_w_id, o.o_d_id, o.o_c_id) ol
        ON ol.w = c.c_w_id AND ol.d = c.c_d_id AND ol.c = c.c_id
      WHERE c.c_balance + c.c_ytd_payment <> COALESCE(ol.s, 0)]]},
}

function cmd_check()
   local _, con = connect()
   local wanted = {}
   for n in string.gmatch(sysbench.opt.check_only or "", "%d+") do wanted[tonumber(n)] = true end
   local loaded = opt_int("customers") - new_per_district()
   local delivered_since = tonumber(con:query_row(string.format(
      "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NOT NULL AND o_id > %d", loaded)))
   local failed, checked = 0, 0
   print("TPC-C-like consistency conditions:")
   for _, cond in ipairs(CONDITIONS) do
      local num, text, sql = cond[1], cond[2], cond[3]
      if next(wanted) == nil or wanted[num] then
         if num == 11 and delivered_since > 0 then
            print(string.format("    condition %2d: skipped (%s; Delivery has run)", num, text))
         else
            if num == 11 then sql = string.format(sql, loaded) end
            local bad = tonumber(con:query_row(sql))
            checked = checked + 1
            if bad == 0 then
               print(string.format("    condition %2d: ok (%s)", num, text))
            else
               failed = failed + 1
               print(string.format("    condition %2d: FAILED, %d rows break it (%s)", num, bad,
                                   text))
               -- the first rows that break it, all their columns
               local rs = con:query(sql:gsub("^SELECT COUNT%(%*%)", "SELECT *", 1) .. " LIMIT 3")
               local row = rs and rs:fetch_row()
               while row do
                  local cells = {}
                  for i = 1, rs.nfields do cells[i] = row[i] or "NULL" end
                  print("        " .. table.concat(cells, " "):sub(1, 300))
                  row = rs:fetch_row()
               end
            end
         end
      end
   end
   print(string.format("consistency: %d of %d conditions hold", checked - failed, checked))
   con:disconnect()
   return failed == 0
end

-- ------------------------------------------------------------------ statistics
-- The main state allocates one slot per (thread, transaction type) in init();
-- each worker writes only its own slots; done() (main state, after the
-- workers) sums and prints them.  The address travels in the environment,
-- tagged with the pid so an inherited value is never used.
local stats = nil

local function stats_from_env()
   local value = os.getenv(SHM_ENV)
   if value == nil then return nil end
   local pid, addr = value:match("^(%d+):(%d+)$")
   if tonumber(pid) ~= ffi.C.getpid() then return nil end
   return ffi.cast("double *", ffi.cast("uintptr_t", tonumber(addr)))
end

function init()
   local n = sysbench.opt.threads * #TXN_NAMES * SLOT
   local mem = ffi.C.calloc(n, ffi.sizeof("double"))
   assert(mem ~= nil, "cannot allocate the statistics")
   ffi.C.setenv(SHM_ENV, string.format("%d:%d", ffi.C.getpid(),
                                        tonumber(ffi.cast("uintptr_t", mem))), 1)
   stats = ffi.cast("double *", mem)
end

local function slot(tid, txn)
   return stats + ((tid * #TXN_NAMES) + (txn - 1)) * SLOT
end

local function record(txn, started, finished, rolled_back, retries)
   local s = slot(sysbench.tid, txn)
   local ms = (finished - started) * 1000
   if rolled_back then s[1] = s[1] + 1 else s[0] = s[0] + 1 end
   s[2] = s[2] + retries
   s[3] = s[3] + ms
   if ms > s[4] then s[4] = ms end
   if s[5] == 0 or started < s[5] then s[5] = started end
   if finished > s[6] then s[6] = finished end
   local b = math.floor((math.log(math.max(ms, HIST_MIN)) - math.log(HIST_MIN)) * HIST_MULT + 0.5)
   if b < 0 then b = 0 elseif b >= BUCKETS then b = BUCKETS - 1 end
   s[SLOT_HEAD + b] = s[SLOT_HEAD + b] + 1
end

local function bucket_value(b)
   return math.exp(b / HIST_MULT + math.log(HIST_MIN))
end

local function percentile(hist, total, pct)
   local want = math.floor(total * pct / 100 + 0.5)  -- sysbench's own rule
   local seen = 0
   for b = 0, BUCKETS - 1 do
      seen = seen + hist[b]
      if seen >= want and seen > 0 then return bucket_value(b) end
   end
   return 0
end

function done()
   if stats == nil then return end
   if sysbench.cmdline.command ~= "run" then return end
   local first, last, reconnects = 0, 0, 0
   local rows = {}
   for txn = 1, #TXN_NAMES do
      local ok, rb, retries, sum, max = 0, 0, 0, 0, 0
      local hist = {}
      for b = 0, BUCKETS - 1 do hist[b] = 0 end
      for tid = 0, sysbench.opt.threads - 1 do
         local s = slot(tid, txn)
         ok, rb, retries, sum = ok + s[0], rb + s[1], retries + s[2], sum + s[3]
         if s[4] > max then max = s[4] end
         if s[5] > 0 and (first == 0 or s[5] < first) then first = s[5] end
         if s[6] > last then last = s[6] end
         reconnects = reconnects + s[7]
         for b = 0, BUCKETS - 1 do hist[b] = hist[b] + s[SLOT_HEAD + b] end
      end
      rows[txn] = {ok = ok, rb = rb, retries = retries, sum = sum, max = max, hist = hist}
   end
   local elapsed = last - first
   local total = 0
   for txn = 1, #TXN_NAMES do total = total + rows[txn].ok + rows[txn].rb end
   local no = rows[1].ok + rows[1].rb
   print("")
   print("TPC-C-like statistics (not TPC-C results):")
   print(string.format("    measured over:                       %.3fs", elapsed))
   print(string.format("    tpmC-like (New-Order per minute):    %.2f",
                       elapsed > 0 and no * 60 / elapsed or 0))
   print(string.format("    transactions per minute (all five):  %.2f",
                       elapsed > 0 and total * 60 / elapsed or 0))
   print(string.format("    reconnects (--reconnect):            %d", reconnects))
   print("    transaction     count  rollbacks   retries  mix %    avg ms    p50 ms    p95 ms    p99 ms    max ms")
   for txn, name in ipairs(TXN_NAMES) do
      local r = rows[txn]
      local n = r.ok + r.rb
      print(string.format("    %-12s %8d %10d %9d %6.2f %9.3f %9.3f %9.3f %9.3f %9.3f", name, n,
                          r.rb, r.retries, total > 0 and n * 100 / total or 0,
                          n > 0 and r.sum / n or 0, math.min(percentile(r.hist, n, 50), r.max),
                          math.min(percentile(r.hist, n, 95), r.max),
                          math.min(percentile(r.hist, n, 99), r.max), r.max))
   end
end

-- ------------------------------------------------------------------ the run
local con, drv
local events = 0
local pending = nil  -- {txn, started, retries} of the transaction being (re)tried

function thread_init()
   stats = stats_from_env()
   drv, con = connect()
end

function thread_done()
   con:disconnect()
end

function sysbench.hooks.before_restart_event(err)
   -- a deadlock, a lock wait timeout, a Galera certification failure: roll
   -- back and let sysbench run the event again (a retry of the same type)
   pcall(function() con:query("ROLLBACK") end)
   if pending ~= nil then pending.retries = pending.retries + 1 end
end

local function warehouse_other_than(w)
   local warehouses = opt_int("warehouses")
   if warehouses == 1 then return w end
   local other = rnd(1, warehouses - 1)
   if other >= w then other = other + 1 end
   return other
end

local function customer_by_name(w, d)
   local top = math.min(999, opt_int("customers") - 1)
   local name = last_name(nurand(255, 0, top, C_LAST_RUN))
   local rs = con:query(string.format(
      "SELECT c_id FROM customer WHERE c_w_id = %d AND c_d_id = %d AND c_last = '%s' " ..
      "ORDER BY c_first", w, d, name))
   local ids = {}
   local row = rs and rs:fetch_row()
   while row do
      ids[#ids + 1] = tonumber(row[1])
      row = rs:fetch_row()
   end
   if #ids == 0 then  -- a scaled-down load may lack the name: fall back to an id
      return nurand(1023, 1, opt_int("customers"), C_ID)
   end
   return ids[math.ceil(#ids / 2)]
end

local function pick_customer(w, d)
   if rnd(1, 100) <= 60 then return customer_by_name(w, d) end
   return nurand(1023, 1, opt_int("customers"), C_ID)
end

local function new_order()  -- clause 2.4
   local w, d = rnd(1, opt_int("warehouses")), rnd(1, DISTRICTS)
   local c = nurand(1023, 1, opt_int("customers"), C_ID)
   local ol_cnt = rnd(5, 15)
   local rollback = rnd(1, 100) == 1
   local lines, all_local = {}, 1
   for i = 1, ol_cnt do
      local item = nurand(8191, 1, opt_int("items"), C_OL_I_ID)
      if rollback and i == ol_cnt then item = opt_int("items") + 1 end  -- an unused item
      local supply = w
      if rnd(1, 100) == 1 then supply = warehouse_other_than(w) end
      if supply ~= w then all_local = 0 end
      lines[i] = {item = item, supply = supply, qty = rnd(1, 10)}
   end
   con:query("BEGIN")
   con:query_row(string.format("SELECT w_tax FROM warehouse WHERE w_id = %d", w))
   local _, o_id = con:query_row(string.format(
      "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = %d AND d_id = %d FOR UPDATE", w, d))
   o_id = tonumber(o_id)
   con:query(string.format(
      "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = %d AND d_id = %d", w, d))
   con:query_row(string.format("SELECT c_discount, c_last, c_credit FROM customer " ..
                               "WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, c))
   con:query(string.format("INSERT INTO orders VALUES (%d,%d,%d,%d,NOW(),NULL,%d,%d)",
                           o_id, d, w, c, ol_cnt, all_local))
   con:query(string.format("INSERT INTO new_orders VALUES (%d,%d,%d)", o_id, d, w))
   for n, line in ipairs(lines) do
      local price = con:query_row(string.format(
         "SELECT i_price, i_name, i_data FROM item WHERE i_id = %d", line.item))
      if price == nil then  -- the unused item: the whole order rolls back
         con:query("ROLLBACK")
         return true
      end
      local qty, dist = con:query_row(string.format(
         "SELECT s_quantity, s_dist_%02d, s_data FROM stock WHERE s_i_id = %d AND s_w_id = %d " ..
         "FOR UPDATE", d, line.item, line.supply))
      qty = tonumber(qty)
      local new_qty = qty >= line.qty + 10 and qty - line.qty or qty - line.qty + 91
      con:query(string.format(
         "UPDATE stock SET s_quantity = %d, s_ytd = s_ytd + %d, s_order_cnt = s_order_cnt + 1, " ..
         "s_remote_cnt = s_remote_cnt + %d WHERE s_i_id = %d AND s_w_id = %d", new_qty, line.qty,
         line.supply ~= w and 1 or 0, line.item, line.supply))
      con:query(string.format(
         "INSERT INTO order_line VALUES (%d,%d,%d,%d,%d,%d,NULL,%d,%.2f,'%s')", o_id, d, w, n,
         line.item, line.supply, line.qty, line.qty * tonumber(price), dist))
   end
   con:query("COMMIT")
   return false
end

local function payment()  -- clause 2.5
   local w, d = rnd(1, opt_int("warehouses")), rnd(1, DISTRICTS)
   local c_w, c_d = w, d
   if rnd(1, 100) > 85 and opt_int("warehouses") > 1 then
      c_w, c_d = warehouse_other_than(w), rnd(1, DISTRICTS)
   end
   local amount = money(100, 500000)
   con:query("BEGIN")
   local c = pick_customer(c_w, c_d)
   con:query(string.format("UPDATE warehouse SET w_ytd = w_ytd + %s WHERE w_id = %d", amount, w))
   con:query_row(string.format("SELECT w_name, w_street_1, w_city, w_state, w_zip FROM warehouse " ..
                               "WHERE w_id = %d", w))
   con:query(string.format("UPDATE district SET d_ytd = d_ytd + %s WHERE d_w_id = %d AND d_id = %d",
                           amount, w, d))
   con:query_row(string.format("SELECT d_name, d_street_1, d_city, d_state, d_zip FROM district " ..
                               "WHERE d_w_id = %d AND d_id = %d", w, d))
   local credit = con:query_row(string.format(
      "SELECT c_credit, c_first, c_last, c_balance FROM customer WHERE c_w_id = %d AND c_d_id = %d " ..
      "AND c_id = %d FOR UPDATE", c_w, c_d, c))
   local bc = ""
   if credit == "BC" then  -- bad credit: the payment's details go to the front of C_DATA
      bc = string.format(", c_data = LEFT(CONCAT('%d %d %d %d %d %s | ', c_data), 500)",
                         c, c_d, c_w, d, w, amount)
   end
   con:query(string.format(
      "UPDATE customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s, " ..
      "c_payment_cnt = c_payment_cnt + 1%s WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d",
      amount, amount, bc, c_w, c_d, c))
   con:query(string.format(
      "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) " ..
      "VALUES (%d,%d,%d,%d,%d,NOW(),%s,'%s')", c, c_d, c_w, d, w, amount, astring(12, 24)))
   con:query("COMMIT")
   return false
end

local function order_status()  -- clause 2.6
   local w, d = rnd(1, opt_int("warehouses")), rnd(1, DISTRICTS)
   con:query("BEGIN")
   local c = pick_customer(w, d)
   con:query_row(string.format("SELECT c_balance, c_first, c_middle, c_last FROM customer " ..
                               "WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, c))
   local o_id = con:query_row(string.format(
      "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = %d AND o_d_id = %d " ..
      "AND o_c_id = %d ORDER BY o_id DESC LIMIT 1", w, d, c))
   if o_id ~= nil then
      con:query(string.format(
         "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line " ..
         "WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %s", w, d, o_id))
   end
   con:query("COMMIT")
   return false
end

local function delivery()  -- clause 2.7, run inline (not deferred)
   local w, carrier = rnd(1, opt_int("warehouses")), rnd(1, 10)
   con:query("BEGIN")
   for d = 1, DISTRICTS do
      local o_id = con:query_row(string.format(
         "SELECT no_o_id FROM new_orders WHERE no_w_id = %d AND no_d_id = %d " ..
         "ORDER BY no_o_id LIMIT 1 FOR UPDATE", w, d))
      if o_id ~= nil then
         con:query(string.format("DELETE FROM new_orders WHERE no_w_id = %d AND no_d_id = %d " ..
                                 "AND no_o_id = %s", w, d, o_id))
         -- Locking reads from here on: a plain SELECT would read the snapshot the
         -- first district's read opened (REPEATABLE READ), which may predate the
         -- order just locked, and find no row for it.
         local c = con:query_row(string.format(
            "SELECT o_c_id FROM orders WHERE o_w_id = %d AND o_d_id = %d AND o_id = %s " ..
            "FOR UPDATE", w, d, o_id))
         con:query(string.format("UPDATE orders SET o_carrier_id = %d WHERE o_w_id = %d AND " ..
                                 "o_d_id = %d AND o_id = %s", carrier, w, d, o_id))
         con:query(string.format("UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = %d " ..
                                 "AND ol_d_id = %d AND ol_o_id = %s", w, d, o_id))
         local total = con:query_row(string.format(
            "SELECT COALESCE(SUM(ol_amount), 0) FROM order_line WHERE ol_w_id = %d AND " ..
            "ol_d_id = %d AND ol_o_id = %s FOR UPDATE", w, d, o_id))
         con:query(string.format("UPDATE customer SET c_balance = c_balance + %s, " ..
                                 "c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = %d AND " ..
                                 "c_d_id = %d AND c_id = %s", total, w, d, c))
      end
   end
   con:query("COMMIT")
   return false
end

local function stock_level()  -- clause 2.8
   local w, d = rnd(1, opt_int("warehouses")), rnd(1, DISTRICTS)
   local threshold = rnd(10, 20)
   con:query("BEGIN")
   local next_o = tonumber(con:query_row(string.format(
      "SELECT d_next_o_id FROM district WHERE d_w_id = %d AND d_id = %d", w, d)))
   con:query_row(string.format(
      "SELECT COUNT(DISTINCT s.s_i_id) FROM order_line l JOIN stock s ON s.s_w_id = l.ol_w_id " ..
      "AND s.s_i_id = l.ol_i_id WHERE l.ol_w_id = %d AND l.ol_d_id = %d AND l.ol_o_id >= %d " ..
      "AND l.ol_o_id < %d AND s.s_quantity < %d", w, d, next_o - 20, next_o, threshold))
   con:query("COMMIT")
   return false
end

local TXNS = {new_order, payment, order_status, delivery, stock_level}

local function pick_txn()
   local r, acc = rnd(1, 100), 0
   for i, share in ipairs(MIX) do
      acc = acc + share
      if r <= acc then return i end
   end
   return #MIX
end

function event()
   if pending == nil then
      local reconnect = opt_int("reconnect")
      if reconnect > 0 and events > 0 and events % reconnect == 0 then
         -- a new connection (sysbench 1.0.20's con:reconnect() crashes)
         con:disconnect()
         con = drv:connect()
         if stats ~= nil then
            local s = slot(sysbench.tid, 1)
            s[7] = s[7] + 1
         end
      end
      events = events + 1
      pending = {txn = pick_txn(), started = now_s(), retries = 0}
   end
   local rolled_back = TXNS[pending.txn]()
   if stats ~= nil then
      record(pending.txn, pending.started, now_s(), rolled_back, pending.retries)
   end
   pending = nil
end

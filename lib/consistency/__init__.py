"""Consistency checks: recorded workloads, faults and checkers (see docs/consistency.md).

Workloads record every operation as ok, fail or unknown; faults (kill,
pause, restart, rejoin, isolate) run on a schedule meanwhile; checkers say
valid, invalid or unknown with the operations, tables and rows as evidence.
"""
from .append import Append, check_append
from .bank import Bank, check_bank
from .faults import (Fault, FaultError, Isolate, Kill, Lag, Pause, Rejoin,
                     Restart, Schedule, Step, Tamper)
from .elle import check_list_append
from .listappend import ListAppend
from .netfaults import Flaky, Latency, Loss, Partition
from .oplog import FAIL, OK, UNKNOWN, History, Op, classify_error
from .ptchecksum import check_pt_table_checksum
from .registers import ReadYourWrites, check_stale_reads
from .run import RunResult, WorkloadError, run_workloads
from .tables import check_tables_equal, row_differences
from .verdict import (INVALID, UNKNOWN_VERDICT, VALID, Verdict, VerdictStatus,
                      combine)
from .workload import Client, Rejected, Workload

__all__ = ("ListAppend", "check_list_append", "Flaky", "Latency", "Loss", "Partition", "Append", "Bank", "Client", "FAIL", "Fault", "FaultError", "History", "INVALID",
           "Isolate", "Kill", "Lag", "OK", "Op", "Pause", "ReadYourWrites", "Rejected", "Rejoin",
           "Restart", "RunResult", "Schedule", "Step", "Tamper", "UNKNOWN", "UNKNOWN_VERDICT",
           "VALID",
           "Verdict", "VerdictStatus", "Workload", "WorkloadError", "check_append", "check_bank",
           "check_pt_table_checksum", "check_stale_reads", "check_tables_equal",
           "classify_error", "combine", "row_differences", "run_workloads")

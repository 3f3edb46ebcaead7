"""Checks over servers besides a test's assertions: schemas compared across servers
(``dbcompare``: dumps, checksums, row diffs), the error-log warnings check
(``errorlog``), valgrind's memcheck summaries (``valgrind``) and a crashed server's
core read with gdb (``backtrace``)."""

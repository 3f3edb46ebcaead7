"""Checks over servers besides a test's assertions: schemas compared across servers
(``dbcompare``: dumps, checksums, row diffs), the error-log warnings check
(``errorlog``) and valgrind's memcheck summaries (``valgrind``)."""

"""Reduction of a hunt finding to a minimal mysql-test case (``--mode=reduce``, issue 32):
delta debugging over a trace's statements (:mod:`.ddmin`), finer passes (:mod:`.passes`),
"still fails?" by the finding's signature (:mod:`.check`), the mysql-test case and bug
report (:mod:`.mtrcase`)."""

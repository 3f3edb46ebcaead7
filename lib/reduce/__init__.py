"""Reduction of a hunt finding to a minimal mysql-test case (``--mode=reduce``, issue 32):
delta debugging over a trace's statements (:mod:`.ddmin`), finer passes (:mod:`.passes`),
"still fails?" by the finding's signature (:mod:`.check`) on a replay in send order
(:mod:`.replay`), in the trace's own order (:mod:`.schedule`, :mod:`.interleave`) or
with every connection at once, free-running, in rounds (:mod:`.concurrent`, :mod:`.freerun`),
what the tries saw and the record of a finding its trace does not reproduce
(:mod:`.attempts`), the mysql-test case and bug report (:mod:`.mtrcase`), the settings the
case pins to what the reduction's servers had (:mod:`.settings`); a hunt's run folder read
and grouped by signature (:mod:`.runfolder`) and its triage table (:mod:`.triage`)."""

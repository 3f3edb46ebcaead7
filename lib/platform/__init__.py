"""Operating-system plumbing: processes, ports, workdir and directories, logging."""

"""Operating-system plumbing: processes (programs and worker forks), ports, workdir and
directories, network namespaces, logging."""

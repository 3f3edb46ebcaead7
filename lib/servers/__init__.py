"""Servers: layout and my.cnf, lifecycle, SQL, Galera, replication, the manager."""

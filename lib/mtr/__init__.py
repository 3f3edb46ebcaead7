"""mysql-test (mtr) support: discovery, configs, bootstrap, running cases with mariadb-test."""

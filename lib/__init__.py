"""kewpie: a Python unittest-based test harness for MySQL-family databases."""

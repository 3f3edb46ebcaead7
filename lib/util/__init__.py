"""kewpie 2012 compatibility: ``mysqlBaseTestCase`` and ``mysql_methods``."""

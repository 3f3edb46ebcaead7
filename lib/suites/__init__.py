"""Finding and loading suites, the test context, KewpieTestCase and its consistency checks."""

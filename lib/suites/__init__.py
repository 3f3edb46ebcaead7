"""Finding and loading suites, the test context and KewpieTestCase."""

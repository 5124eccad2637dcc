"""Code shared by the tests and the benchmarks (neither imports the other): the test server
process (server.py) and the many-users harness (many_users/)."""

"""Code shared by the tests and the benchmarks (neither imports the other): the test server
process and the many-users load harness."""

"""Code shared by the tests and the benchmarks (neither imports the other): the test server
process (server.py), a browser tab over Streamlit's protocol without a browser (tab.py) and the
many-users harness (many_users/)."""

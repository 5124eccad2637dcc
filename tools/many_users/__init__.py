"""The many-users harness: N real browser sessions against one server at once, checked each step
(tests/test_many_users.py runs it; bench/many_users_report.py with more users).

- config: the configuration, the simulated users' scenarios and the report.
- run: a dedicated server, N browser contexts, the report's figures.
- user: one simulated user on its own share link.
- js: the JavaScript the browsers run (error watcher, page snapshots).
- proc: the server process read from /proc (memory, CPU, error log lines).
"""

"""Serving under load (URL `/load`): link (every input declared once), inputs (the sidebar),
run (the engine calls, cached, and the work budget), figures (latency and throughput against
rate, a run's timeline), view (cards, words, tables), show (the main-area sections)."""

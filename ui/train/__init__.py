"""Training planner (URL `/train`): link (every input declared once), inputs (the sidebar), run
(the engine calls, cached, and the configuration budget), figures (step time, memory, scaling),
view (cards, words, tables), show (the main-area sections)."""

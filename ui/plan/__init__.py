"""The planner page (pages/plan.py): which deployments serve an LLM within its SLOs, and at what
cost.

- link: its share-link parameters, each declared once; inputs: its sidebar inputs.
- grid: the grid of configurations, the sweep, the table and the CSV; view: SLO checks,
  Pareto fronts, the words; figures: the Pareto chart.
"""

"""Design-space exploration: constraints and the Pareto front over a table of results (the
training search's, the serving planner's). docs/model.md, "Design-space exploration"."""

"""Footprint and cost of ownership: the energy, carbon and water of accelerators running at a
site (grid profiles in data/grids.toml), and what owning them costs per GPU-hour and per 1M
tokens beside renting them (defaults in data/ownership.toml). docs/model.md, "Footprint and cost
of ownership"."""

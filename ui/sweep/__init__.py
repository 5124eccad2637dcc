"""The batch-sweep page (pages/sweep.py): one model × one accelerator over a batch list.

- link: the page's share-link parameters, each declared once.
- view: the headline cards, the crossover prose and the latency-budget cards.
"""

"""The hardware-comparison page (pages/compare.py): one model on 2–8 accelerators.

- link: the page's share-link parameters, each declared once.
- view: the per-accelerator summary and its captions.
- deployments: multi-device deployments ("8xH100/tp8") in links, checked by the engine's rules;
  deploy: their section (serving model over the batch list, chart, table, CSV).
"""

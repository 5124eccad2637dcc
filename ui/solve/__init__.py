"""The single-solve page (pages/solve.py): one model × one accelerator × one batch.

- link: the page's share-link parameters, each declared once.
- view: the headline (regime, roofline bound, does it fit) and the pointer to the decode page.
- explain: the result in plain words; metrics: the metric cards and the table of every figure.
- breakdown: the look inside the model (an LLM's operators, a CNN's layers); layers: the CNN
  layer table's builders.
"""

"""The catalogue page (pages/catalogue.py): every accelerator and model with its figures.

- link: the page's share-link parameters, each declared once.
- frames: the accelerator and model tables in the units their headers name; search: the search
  box's matching rule and its link reader.
"""

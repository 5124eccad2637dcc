"""The accuracy page (pages/accuracy.py): the serving model's predictions against measurements.

- view: the measured-vs-predicted figure and the tables (pure).
- session: the measurements and profiles in the session, the fit, the cached validation.
"""

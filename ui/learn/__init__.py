"""Lessons (URL `/learn`): the MLSys·im tutorial chain as live lessons, in every language.

- link: the share link (`lesson` and each lesson's own parameters, declared once).
- content: what a lesson is (its question, experiment, published figures, exercises) as data.
- lessons/: one data module per chapter (text marked for translation with N_) and the
  registry `LESSONS`.
- roofline, serving, pipeline, training: each lesson's live experiment (widgets, engine calls,
  charts from ui/charts), returning the figures and answers the page shows and checks.
- render: the page's parts (picker, question, figures beside the tutorial's, exercises, links).
"""

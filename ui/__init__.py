"""The page code (never math: every number comes from the engine's public API), by role and by
page (docs/architecture.md; tests/test_layering.py enforces the arrows, lowest first):

- words/: translation and the one number formatter; runtime/: the server's memory;
- links/: share-link parameters, each declared once (imports words);
- core/: what every page needs (page frame, budget, CSV, profiles; imports the three above);
- charts/: pure figure and table builders several pages share (imports words, links, core);
- widgets/: sidebar inputs several pages share (imports the above and charts);
- solve/, sweep/, compare/, decode/, plan/, load/, train/, accuracy/, catalogue/, learn/: one
  page's own code each (imports the shared folders; never another page's folder).
"""

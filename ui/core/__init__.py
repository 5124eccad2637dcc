"""What every page needs, and nothing page-specific (imports ui/words, ui/runtime, ui/links and
the engine's public API).

- frame: page setup and navigation (PAGES), the cached catalogue, catalogue and link notes,
  engine warnings, the share link.
- budget: each page's work per rerun and its refusal.
- downloads: CSV download buttons.
- profiles: profiles in links and captions.
"""

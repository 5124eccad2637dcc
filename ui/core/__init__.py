"""What every page needs, and nothing page-specific: imports only the engine's public API.

- frame: page setup and navigation (PAGES), the cached catalogue, catalogue and link notes,
  engine warnings, the share link.
- params: a page's share-link parameters, each declared once (`Param`, `Link`), read and
  written (pure); state: the Streamlit glue that seeds widgets from the link and writes the
  link back from them; link_params: the parameters several pages declare alike;
  assumptions: the one table of assumption ranges and defaults; profiles: profiles in links
  and captions; custom: custom accelerators and models carried in links.
- format: the one number formatter; text: `plain` for user text, FLOP_NOTE; downloads: CSV.
"""

"""What every page needs, and nothing page-specific: imports only the engine's public API.

- frame: page setup and navigation (PAGES), the cached catalogue, catalogue and link notes,
  engine warnings, the share link.
- params: share-link parameters, read and written (pure); state: the Streamlit glue that
  seeds widgets from the link and writes the link back; custom: custom specs in links.
- format: the one number formatter; text: `plain` for user text; downloads: CSV downloads.
"""

"""Share-link parameters, each declared once: read from an untrusted query, seeded into the
widgets, written back to the address bar (imports ui/words and the engine's public API).

- params: a page's parameters (`Param`, `Link`), read and written (pure).
- state: the Streamlit glue that seeds widgets from the link and writes the link back.
- link_params: the parameters several pages declare alike.
- assumptions: the one table of assumption ranges and defaults, as parameters.
- custom: custom accelerators and models carried in links.
"""

"""Words on screen: the one translation mechanism and the one number formatter (the lowest
folder of ui/ with runtime/: imports nothing else of ui/, only the engine's public API).

- i18n: gettext catalogues (`_()`, `ngettext()`, `N_()`), the language in use and its picker,
  the engine's fixed messages shown translated.
- format: the one number formatter (metrics, tables, hover text, chart labels).
- text: `plain` for user and file text, the FLOP counting note.
"""

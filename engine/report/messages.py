"""The engine's fixed messages that the app shows in the reader's language.

The engine returns English only (its JSON, CSV and CLI output are contracts). A fixed message
the app translates is written once, where the engine returns it, marked with `N_`: the app's
message extraction (babel.cfg) collects it, and the app translates the engine's text by its
English words (ui.core.i18n.engine_text). A message with numbers or names in it is fixed only
as a template with its values apart (an error band's basis: engine.Band.template and .fields,
shown through ui.core.i18n.band_basis); the others stay English.
"""


def N_(message: str) -> str:
    """Mark `message` for extraction where it is written; the app translates it where it is
    shown (`_()`). Returns it unchanged."""
    return message

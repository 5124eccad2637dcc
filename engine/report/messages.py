"""The engine's fixed messages that the app shows in the reader's language.

The engine returns English only (its JSON, CSV and CLI output are contracts). A fixed message
the app translates is written once, where the engine returns it, marked with `N_`: the app's
message extraction (babel.cfg) collects it, and the app translates the engine's text by its
English words (ui.core.i18n.engine_text). A message with numbers or names in it is not fixed
and stays English.
"""


def N_(message: str) -> str:
    """Mark `message` for extraction where it is written; the app translates it where it is
    shown (`_()`). Returns it unchanged."""
    return message

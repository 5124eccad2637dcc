"""The engine's fixed messages that the app shows in the reader's language.

The engine returns English only (its JSON, CSV and CLI output are contracts). A fixed message
the app translates is written once, where the engine returns it, marked with `N_`: the app's
message extraction (babel.cfg) collects it, and the app translates the engine's text by its
English words (ui.core.i18n.engine_text; `marked()` lists every marked message the engine has
loaded). A message with numbers or names in it is a marked template with {named} fields,
formatted by the engine (`N_("… {hw} …").format(hw=...)`, every value formatted to text
first): the app recognises the English text by its template and shows the translated template
with the same values. An error band's basis
keeps its template and values apart instead (engine.Band.template, .fields).
"""

_MARKED: dict[str, None] = {}  # every marked message, in marking order


def N_(message: str) -> str:
    """Mark `message` for extraction where it is written; the app translates it where it is
    shown (`_()`). Returns it unchanged, and registers it for `marked()`."""
    _MARKED[message] = None
    return message


def marked() -> tuple[str, ...]:
    """Every message the engine has marked (the modules loaded so far), templates included."""
    return tuple(_MARKED)

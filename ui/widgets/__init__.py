"""Sidebar inputs shared by pages, each bound to the share link by its key `<page>:<name>` and
drawn from the parameter's one declaration (ui.links.params.Link): a number field's range is its
reader's range (pickers.number_input), a picker's fallback its declared default.

Imports the shared folders below it (words, runtime, links, core, charts) and the engine's public
API only (never a page's folder; nothing in ui/charts imports from here, so the arrow runs one
way: widgets -> charts -> core).

- pickers: model, accelerators, batch, batch list, precision, the assumptions, number fields.
- editors: the custom accelerator and model editors; scenario: the start every scenario page
  shares (bind the link, draw the editors, the catalogue with the custom entries).
- profile: the profile picker; tokens: input and output tokens; llm_view: the LLM view of the
  sweep and comparison pages (decode or tutorial, context, memory reserve).
- model_config: a Hugging Face config.json as a model (reader, link parameter, picker).
"""

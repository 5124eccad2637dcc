"""The LLM serving page (pages/decode.py, URL /decode): one deployment of a decoder LLM.

- view: its link parameters (older `context`/`prompt` links included), engine calls, headline
  and curves; inputs: its sidebar widgets and headline cards.
- config: a Hugging Face config.json carried in the link; figures: its charts and words.
"""

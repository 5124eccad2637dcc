"""The LLM serving page (pages/decode.py, URL /decode): one deployment of a decoder LLM.

- link: its share-link parameters, each declared once (older `context`/`prompt` links
  included); view: its engine calls, headline and curves; inputs: its sidebar widgets and
  headline cards.
- config: a Hugging Face config.json carried in the link; figures: its charts and words.
"""

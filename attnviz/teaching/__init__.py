"""The teaching material: what the pages show beside the engine's numbers, pure NumPy or
pure Python, no Streamlit. Its modules, one line each:

- ``presets``: the five seed notebooks as presets, with the values they print.
- ``experiments``: the scaling experiments, positional encodings and the other small
  experiments behind the pages.
- ``inputs``: the inputs X: seeded random, typed text (fixed embeddings), CSV uploads.
- ``explain``: one cell's arithmetic (``cell(result, head, query, key)``: products, dot,
  scale, mask, row exponentials, weight, output terms).
- ``latex``: LaTeX for slides: ``bmatrix`` of small matrices, one query's worked example,
  one cell's arithmetic, the em size of a text's display formulas.
- ``wording``: numbers and counts as a student reads them (``readable``, ``rounding``,
  ``plural``).
- ``token_text``: a token as text a person can see (``visible``, ``raw``, ``numbered``);
  every view that shows a token calls it.
- ``cross``: the Cross-attention page's two sequences (random, typed text, a named pair of
  ``PAIRS``) and its run through ``engine.cross_attention``.

It stands on the engine (and ``attnviz.i18n``) only.
"""

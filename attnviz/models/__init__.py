"""Pretrained models run through attnviz's own NumPy engine.

The two bundled ones (:mod:`attnviz.models.minilm`, :mod:`attnviz.models.smollm`), and any
Hugging Face checkpoint on this machine of a supported family (docs/models.md)::

    from attnviz import models

    entries = models.find()          # the hub cache and ATTNVIZ_MODELS, nothing downloaded
    model = models.load(entries[0])  # or models.load("/path/to/folder"); once per process
    tokens, ids = model.tokenize("The cat sat")
    run = model.run_ids(ids)         # run.attentions (L, H, N, N); decoders: run.logits (V,)
    model.generate(ids, 20)          # decoders: the new ids (greedy), with a KV cache

This file only names the catalogue (:mod:`attnviz.models.catalog`); the families are
imported when a folder is read.
"""

from attnviz.models.catalog import ModelEntry, find, load

__all__ = ["ModelEntry", "find", "load"]

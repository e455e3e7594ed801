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

Its modules, one line each:

- ``catalog``: any model on the disk (docs/models.md): ``find()`` (the hub cache and
  ``ATTNVIZ_MODELS``, headers only), ``scan()`` (also what was left out and why), ``load()``
  (the folder's own rule checked first, then once per folder and process, a lock per model).
- ``checkpoint``: a Hugging Face checkpoint folder: ``config.json``, safetensors headers read
  by hand (f32, f16, bf16, memory-mapped, shards), ``tokenizer.json``, the size limit, every
  file checked to stay in its folder; ``CheckpointError``.
- ``families``: the table of family modules and the dispatch from ``model_type``.
- ``layers``: the parts every model uses: norms, MLPs, embeddings, attention through the
  engine, the weights cache, install errors.
- ``causal``: what every decoder family shares: the forward pass over a KV cache,
  ``run_ids``, ``attention_result``, ``generate_steps`` and ``generate``, sampling.
- ``encoder``: BERT, RoBERTa, DistilBERT; ``gpt2``: GPT-2; ``llama``: Llama, Mistral, Qwen2,
  Qwen3 (RoPE, grouped-query attention); ``gemma3``: Gemma 3 (Llama with Gemma's switches).
- ``encdec``: what the encoder-decoders share (``EncoderDecoder``: encoder, decoder and
  cross attentions, generation with a KV cache); ``t5``: T5 and T5 v1.1; ``bart``: BART
  and Marian.
- ``minilm``, ``smollm``: the two bundled models (MiniLM-L6, SmolLM2-135M) in NumPy;
  ``gguf_file``: a small GGUF reader (F32/F16/Q8_0/Q4_1).
- ``head_patterns``: the six head scores (previous, first, self, local, duplicate,
  induction) of every head at once, and the repeated random probe; ``head_probes``: the
  probe through SmolLM2 and MiniLM.
"""

from attnviz.models.catalog import ModelEntry, find, load

__all__ = ["ModelEntry", "find", "load"]

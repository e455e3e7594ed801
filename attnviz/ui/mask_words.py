"""The words of the mask registry (:mod:`attnviz.engine.masks`) in the catalogs.

``attnviz.engine.masks`` stays language-free (the engine's layer, ``tests/engine/test_masks.py``);
what of
it a reader sees (each kind's label and explanation, each parameter's label, short name and
the note when it is more than N) is marked here for the catalogs and translated where it is
shown (``_(kind.explain)``). ``tests/ui/test_mask_words.py`` keeps this list equal to the
registry's words.
"""

from __future__ import annotations

from attnviz.i18n import N_

WORDS = (
    N_("none"),
    N_("no mask: every query sees every key"),
    N_("causal"),
    N_("causal: token i sees tokens 0..i"),
    N_("padding (last k tokens)"),
    N_("padding: nobody attends to the last k tokens"),
    N_("k — padding tokens at the end"),
    N_("padding k"),
    N_("Only {n} tokens: all of them are padding (k = {value} is more than N)."),
    N_("sliding window (last w tokens)"),
    N_("window: token i sees the last w tokens, i-w+1..i (Mistral, Gemma)"),
    N_("w — window: each token sees the last w tokens"),
    N_("window w"),
    N_(
        "Only {n} tokens: a window of {value} is more than N; using window = {n} (the causal mask)."
    ),
    N_("prefix LM (first p tokens seen by all)"),
    N_("prefix: every token sees the first p tokens, then causal (T5, PaLM)"),
    N_("p — prefix: tokens every token sees"),
    N_("prefix p"),
    N_(
        "Only {n} tokens: a prefix of {value} is more than N; using prefix = "
        "{n} (every token sees every key)."
    ),
)

"""The Cross-attention page's inputs and run: a source and a target sequence (pure NumPy).

In cross-attention (an encoder-decoder's decoder, a translation model) the **target**
asks and the **source** answers: Q comes from the target's tokens, K and V from the
source's, so the weights are (T target tokens, S source tokens) and every target token
may read the whole source. Each sequence is random (seeded), typed text (the fixed
embeddings of :func:`attnviz.teaching.inputs.text_input`) or one of the :data:`PAIRS`::

    from attnviz import cross
    seqs = cross.sequences("text", d=8, seed=0)            # the default sentences
    res = cross.run(seqs, d=8, heads=2, seed=0)            # engine.cross_attention
    res.weights.shape                                      # (2, 7, 4): (H, T, S)

Nothing here raises for what a user types: an empty sentence, one longer than
:data:`N_MAX` tokens, a padding longer than the source come back with a note saying what
was used instead. A causal mask over two lengths is the engine's ``ValueError``, which
says why (the page shows it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz import engine, i18n
from attnviz.engine import limits
from attnviz.i18n import N_, _, ngettext
from attnviz.teaching import inputs

__all__ = [
    "INPUTS",
    "MASKS",
    "N_MAX",
    "PAIRS",
    "SOURCE_TEXT",
    "TARGET_TEXT",
    "Sequences",
    "mask_of",
    "pair_label",
    "run",
    "sequences",
]

#: How the two sequences are made: seeded random, typed text, a named pair.
INPUTS = ("random", "text", "preset")
#: The masks of cross-attention: none, the source's padding, causal (equal lengths only).
MASKS = ("none", "padding", "causal")
#: The most tokens of either sequence (the charts keep every label and the cell panel
#: works in the browser up to here; attnviz.engine.limits).
N_MAX = limits.CROSS_N_MAX
#: The most characters of a sentence used (a longer one is cut, with a note), and of a
#: token's label on the charts (a longer word keeps its embedding, its label is cut).
MAX_CHARS = 500
LABEL_CHARS = 20
SOURCE_TEXT = "the black cat sat"
TARGET_TEXT = "le chat noir s'est assis"

#: Named (source, target) pairs: what an encoder reads, what its decoder writes. The names
#: are URL values (English in every language): :func:`pair_label` shows them; the
#: sentences are token text, never translated.
PAIRS: dict[str, tuple[str, str]] = {
    N_("translation (English → French)"): (SOURCE_TEXT, TARGET_TEXT),
    N_("translation (English → German)"): (
        "the cat sat on the mat",
        "die Katze saß auf der Matte",
    ),
    N_("question → passage"): (
        "Paris is the capital of France and its largest city",
        "what is the capital of France ?",
    ),
    N_("summary of a sentence"): (
        "the committee met on Monday and after a long debate approved the new budget",
        "budget approved",
    ),
}


def pair_label(pair: str) -> str:
    """A name of :data:`PAIRS` as shown, in the shown language."""
    return _(pair) if pair in PAIRS else pair


#: A note of :class:`Sequences`: (side "source" or "target", what happened: "long",
#: "empty" or "tokens", its numbers and words).
Note = tuple[str, str, dict[str, object]]


@dataclass(frozen=True, eq=False)
class Sequences:
    """The two inputs: ``source`` (S, D) gives K and V, ``target`` (T, D) gives Q; each
    with its token labels; ``said``: what was used instead of what was asked for, as data
    (language-free, so that a cache of it serves every language); :attr:`notes` words it."""

    source: inputs.TokenInput
    target: inputs.TokenInput
    said: tuple[Note, ...] = ()

    @property
    def notes(self) -> tuple[str, ...]:
        """What was used instead of what was asked for, in the shown language."""
        return tuple(_note(side, what, values) for side, what, values in self.said)


def _note(side: str, what: str, v: dict) -> str:
    """One note of :attr:`Sequences.notes`: each side its own sentences (their grammar
    differs between languages)."""
    source = side == "source"
    if what == "long":
        n = int(v["count"])
        text = (
            ngettext(
                "The source sentence has {count} character; only the first {max} are used.",
                "The source sentence has {count} characters; only the first {max} are used.",
                n,
            )
            if source
            else ngettext(
                "The target sentence has {count} character; only the first {max} are used.",
                "The target sentence has {count} characters; only the first {max} are used.",
                n,
            )
        )
        return text.format(count=_thousands(n), max=v["max"])
    if what == "empty":
        text = (
            _("The source sentence has no tokens; using {default}.")
            if source
            else _("The target sentence has no tokens; using {default}.")
        )
        return text.format(default=repr(v["default"]))
    n = int(v["count"])
    text = (
        ngettext(
            "The source sentence has {count} token; only the first {max} are used.",
            "The source sentence has {count} tokens; only the first {max} are used.",
            n,
        )
        if source
        else ngettext(
            "The target sentence has {count} token; only the first {max} are used.",
            "The target sentence has {count} tokens; only the first {max} are used.",
            n,
        )
    )
    return text.format(count=n, max=v["max"])


def _thousands(n: int) -> str:
    """``n`` with a thousands sign: "1,234" (in Spanish "1.234")."""
    text = f"{n:,}"
    return text.replace(",", ".") if i18n.decimal_sign(i18n.current()) == "," else text


def _text(text: str, default: str, d: int, side: str, notes: list[Note]) -> inputs.TokenInput:
    """``text``'s tokens and embeddings; an empty one: ``default``'s; a long one: cut to
    :data:`MAX_CHARS` characters and :data:`N_MAX` tokens; labels of at most
    :data:`LABEL_CHARS` characters."""
    if len(text) > MAX_CHARS:
        notes.append((side, "long", {"count": len(text), "max": MAX_CHARS}))
        text = text[:MAX_CHARS]
    if not inputs.tokenize(text, max_tokens=1):
        notes.append((side, "empty", {"default": default}))
        text = default
    count = len(inputs.tokenize(text, max_tokens=10**6))
    if count > N_MAX:
        notes.append((side, "tokens", {"count": count, "max": N_MAX}))
    ti = inputs.text_input(text, d, max_tokens=N_MAX)
    return inputs.TokenInput(ti.x, tuple(_label(t) for t in ti.labels))


def _label(token: str) -> str:
    """A token as a chart labels it: at most :data:`LABEL_CHARS` characters."""
    return token if len(token) <= LABEL_CHARS else token[: LABEL_CHARS - 1] + "…"


def _random(n: int, d: int, seed: int, side: str, prefix: str) -> inputs.TokenInput:
    """(n, d) from N(0, 1), the source from ``default_rng([seed, 0])``, the target from
    ``default_rng([seed, 1])``: two different sequences for one seed."""
    x = np.random.default_rng([seed, 0 if side == "source" else 1]).standard_normal((n, d))
    return inputs.TokenInput(x, tuple(f"{prefix}{i}" for i in range(n)))


def sequences(
    kind: str = "text",
    *,
    d: int,
    seed: int = 0,
    n_src: int = 4,
    n_tgt: int = 7,
    text_src: str = SOURCE_TEXT,
    text_tgt: str = TARGET_TEXT,
    pair: str | None = None,
) -> Sequences:
    """The source and the target: ``kind`` "random" (``n_src``, ``n_tgt`` tokens from the
    seed, labelled s0, s1, … and t0, t1, …), "text" (``text_src``, ``text_tgt``) or
    "preset" (the texts of :data:`PAIRS` ``[pair]``). Raises ``ValueError`` for an
    unknown kind or pair, or sizes out of range (1..:data:`N_MAX`, D 1..128)."""
    if kind not in INPUTS:
        raise ValueError(f"kind must be one of {', '.join(INPUTS)}, got {kind!r}")
    if not 1 <= d <= inputs.MAX_WIDTH:
        raise ValueError(f"D must be from 1 to {inputs.MAX_WIDTH}, got {d}")
    notes: list[Note] = []
    if kind == "random":
        for name, n in (("N_src", n_src), ("N_tgt", n_tgt)):
            if not 1 <= n <= N_MAX:
                raise ValueError(f"{name} must be from 1 to {N_MAX}, got {n}")
        src = _random(n_src, d, seed, "source", "s")
        tgt = _random(n_tgt, d, seed, "target", "t")
        return Sequences(src, tgt)
    if kind == "preset":
        if pair not in PAIRS:
            raise ValueError(f"pair must be one of {', '.join(map(repr, PAIRS))}, got {pair!r}")
        text_src, text_tgt = PAIRS[pair]
    src = _text(text_src, SOURCE_TEXT, d, "source", notes)
    tgt = _text(text_tgt, TARGET_TEXT, d, "target", notes)
    return Sequences(src, tgt, tuple(notes))


def mask_of(kind: str, n_tgt: int, n_src: int, pad: int = 0) -> np.ndarray | str | None:
    """The engine's ``mask`` for ``kind``: None, the source's last ``pad`` tokens hidden
    (:func:`engine.key_padding_mask`, ``pad`` at most S), or "causal" (the engine refuses
    it for T != S, saying why)."""
    if kind not in MASKS:
        raise ValueError(f"mask must be one of {', '.join(MASKS)}, got {kind!r}")
    if kind == "padding":
        return engine.key_padding_mask(n_tgt, n_src, min(max(int(pad), 0), n_src))
    return "causal" if kind == "causal" else None


def run(
    seqs: Sequences,
    *,
    d: int,
    heads: int = 1,
    seed: int = 0,
    init: str = "xavier",
    bias: bool = True,
    scale: engine.Scale = True,
    mask: str = "none",
    pad: int = 0,
) -> engine.AttentionResult:
    """:func:`engine.cross_attention` of the target over the source, with weights from
    ``seed + 1`` (as the playground's). Raises the engine's ``ValueError`` (a causal mask
    over two lengths, heads that do not divide D)."""
    params = engine.AttentionParams.random(d, seed=seed + 1, init=init, bias=bias)
    t, s = seqs.target.n, seqs.source.n
    return engine.cross_attention(
        seqs.target.x, seqs.source.x, params, num_heads=heads, scale=scale,
        mask=mask_of(mask, t, s, pad),
    )  # fmt: skip

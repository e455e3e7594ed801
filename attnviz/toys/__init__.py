"""Tiny attention-only transformers trained in NumPy: watch an attention head form.

Every other view of attnviz shows attention computed with random weights, or read out of a
model someone else trained. Here the weights are learned, in plain NumPy, in seconds: train
a two-layer attention-only transformer on sequences that repeat and a previous-token head
forms in layer 0, then an induction head in layer 1, in a sudden drop of the loss (Olsson
et al. 2022, "In-context Learning and Induction Heads").

The model (no MLPs, no biases, no layer norm, causal), in row layout as the engine::

    x = embed[ids] + pos[:T]                                     # (B, T, D)
    for each layer l:
        x = x + Σ_h softmax(causal(Q_h K_hᵀ / √d_h)) V_h w_o[l, h]
            with Q_h = x w_q[l, h], K_h = x w_k[l, h], V_h = x w_v[l, h]
    logits = x unembed                                           # (B, T, V)

Shapes: B sequences of T tokens, V tokens in the vocabulary, D the width of the residual
stream, L layers of H heads of width d_h. :func:`forward` runs it; :func:`loss_and_grads`
runs it and its backward pass, written out step by step beside the forward's steps;
:func:`train` runs Adam (written out too). The four tasks (:data:`TASKS`):

``previous``   random tokens; predict the token before this one (1 layer)
``reverse``    a sequence, a separator, then the same sequence reversed: the second half
               attends along an anti-diagonal (1 layer)
``induction``  a sequence of distinct random tokens repeated twice, among other random
               tokens (its length and place vary, so no fixed offset finds the answer):
               the second copy is predictable only by induction (2 layers)
``align``      an encoder-decoder (:class:`EncDecParams`: the encoder's self-attention,
               the decoder's causal self-attention and its cross-attention, queries from
               the decoder, keys and values from the encoder's last stream) translating
               English colour-noun pairs into French, each colour after its noun: its
               cross-attention learns the alignment (:meth:`AlignTask.aligned`,
               :func:`alignment`). ``forward(params, src, tgt)`` gives the attentions as
               a dict (``"encoder"``, ``"decoder"``, ``"cross"``); ``forward`` and
               ``loss_and_grads`` dispatch on the parameters' type (1 layer)

:func:`load` gives the run shipped with the package for each task (made by
``python -m attnviz.toys --task induction --seed 0``, byte-identical when re-run);
:func:`job_scores` the score of each head at each checkpoint for the job the task needs
(previous-token, induction, anti-diagonal, alignment accuracy), :func:`example` the fixed
sequence a page shows and :func:`example_attentions` every head's weights on it
(:func:`example_cross`: an encoder-decoder's cross-attention heads).
NumPy only: no Streamlit, no plotting. Bad input raises ``ValueError`` (an unknown task
``KeyError``) saying what was expected and what came.

One module per concern (``toys.<name>`` reaches every public name):

- ``model``: the parameters and the forward pass; ``backward``: the loss and its gradients.
- ``tasks``: the tasks, their example, the phase change; ``scores``: each head's job score.
- ``training``: Adam, ``train_iter``, ``train``; ``runs``: the run files (``toy_runs/``),
  ``load``.
- ``runner``: a run trained in a server thread, one slot per core, stopped when its page is
  left (what **Train it yourself** starts).
- ``cli``, ``__main__``: the command, ``python -m attnviz.toys``.
"""

from __future__ import annotations

from attnviz.toys.backward import loss_and_grads
from attnviz.toys.cli import main
from attnviz.toys.model import ENCDEC_SHAPES, SHAPES, EncDecParams, ToyParams, forward
from attnviz.toys.runs import history_bytes, load, read_history, run_path
from attnviz.toys.scores import (
    JOBS,
    JobScores,
    alignment,
    alignment_accuracy,
    antidiagonal_share,
    evaluate,
    job_scores,
)
from attnviz.toys.tasks import (
    SEPARATOR,
    TASKS,
    AlignTask,
    Example,
    Task,
    example,
    example_attentions,
    example_cross,
    example_result,
    get_task,
    phase_change,
)
from attnviz.toys.training import MAX_STEPS, History, train, train_iter

__all__ = [
    "ENCDEC_SHAPES",
    "JOBS",
    "MAX_STEPS",
    "SEPARATOR",
    "SHAPES",
    "TASKS",
    "AlignTask",
    "EncDecParams",
    "Example",
    "History",
    "JobScores",
    "Task",
    "ToyParams",
    "alignment",
    "alignment_accuracy",
    "antidiagonal_share",
    "evaluate",
    "example",
    "example_attentions",
    "example_cross",
    "example_result",
    "forward",
    "get_task",
    "history_bytes",
    "job_scores",
    "load",
    "loss_and_grads",
    "main",
    "phase_change",
    "read_history",
    "run_path",
    "train",
    "train_iter",
]

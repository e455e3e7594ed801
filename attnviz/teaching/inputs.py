"""Where the input matrix X comes from: random numbers, typed text, or an uploaded CSV.

Pure NumPy (no Streamlit). Every function returns X in row layout, one token per row,
shape (N, D), plus the token labels that the figures put on their axes.

- :func:`random_input`: X ~ N(0, 1), seeded (``np.random.default_rng(seed)``).
- :func:`tokenize` / :func:`text_input`: words and punctuation become tokens; each
  token gets a deterministic embedding (the same word always gets the same row, in
  every session and on every machine), so repeated words give identical rows.
- :func:`parse_csv`: a CSV of numbers (optionally a header row and/or a first column of
  token labels), validated for size, shape and finite numbers; errors raise
  ``ValueError`` with a message meant for the person who uploaded the file (in the shown
  language).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz import i18n
from attnviz.engine import limits
from attnviz.i18n import _

__all__ = [
    "MAX_TOKENS",
    "MAX_UPLOAD_BYTES",
    "MAX_WIDTH",
    "TokenInput",
    "default_labels",
    "parse_csv",
    "random_input",
    "text_input",
    "token_embedding",
    "tokenize",
]

MAX_TOKENS = limits.N_MAX  #: the largest N the app draws (attnviz.engine.limits)
MAX_WIDTH = limits.D_MAX  #: the largest D the app accepts (attnviz.engine.limits)
#: CSV size limit: 1 MB, as Streamlit counts it (2**20 bytes); the same as
#: ``server.maxUploadSize = 1`` in .streamlit/config.toml and the uploader's
#: ``max_upload_size`` (attnviz.ui passes MAX_UPLOAD_BYTES // 2**20), so the three agree.
MAX_UPLOAD_BYTES = 1 * 2**20

_TOKEN_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True, eq=False)
class TokenInput:
    """An input matrix with its token labels (row i of ``x`` is token ``labels[i]``)."""

    x: NDArray[np.float64]
    labels: tuple[str, ...]

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    @property
    def d(self) -> int:
        return int(self.x.shape[1])


def default_labels(n: int) -> tuple[str, ...]:
    """Labels for tokens that have no text: ``t0, t1, ...`` (0-based, as in NumPy)."""
    return tuple(f"t{i}" for i in range(n))


def _check_nd(n: int, d: int) -> None:
    if not (isinstance(n, int | np.integer) and 1 <= n <= MAX_TOKENS):
        raise ValueError(
            _("N (tokens) must be an integer from 1 to {max}, got {n}").format(
                max=MAX_TOKENS, n=repr(n)
            )
        )
    if not (isinstance(d, int | np.integer) and 1 <= d <= MAX_WIDTH):
        raise ValueError(
            _("D (model width) must be an integer from 1 to {max}, got {d}").format(
                max=MAX_WIDTH, d=repr(d)
            )
        )


def random_input(n: int, d: int, seed: int = 0) -> TokenInput:
    """X (n, d) drawn from N(0, 1) with ``np.random.default_rng(seed)``."""
    _check_nd(n, d)
    x = np.random.default_rng(seed).standard_normal((n, d))
    return TokenInput(x, default_labels(n))


def tokenize(text: str, max_tokens: int = MAX_TOKENS) -> list[str]:
    """Split text into words and punctuation marks: "Hi, you." -> ["Hi", ",", "you", "."].

    At most ``max_tokens`` tokens are kept (the rest is dropped).
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return _TOKEN_RE.findall(text)[:max_tokens]


def token_embedding(token: str, d: int) -> NDArray[np.float64]:
    """A deterministic N(0, 1) vector of length ``d`` for ``token``.

    The seed is the SHA-256 of the token (case-sensitive), so the vector is the same in
    every run and does not depend on Python's randomised ``hash``. Vector ``d`` is a
    prefix of vector ``d + 1``: widening D adds features without changing the others.
    """
    if d < 1:
        raise ValueError(f"embedding width d must be >= 1, got {d}")
    seed = int.from_bytes(hashlib.sha256(token.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(d)


def text_input(text: str, d: int, max_tokens: int = MAX_TOKENS) -> TokenInput:
    """Tokens of ``text`` as labels and their embeddings as the rows of X (N, d)."""
    tokens = tokenize(text, max_tokens)
    if not tokens:
        raise ValueError(_("the text has no tokens: type at least one word"))
    _check_nd(len(tokens), d)
    x = np.stack([token_embedding(t, d) for t in tokens])  # (N, d)
    return TokenInput(x, tuple(tokens))


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _mb(n_bytes: int) -> str:
    """A size limit in Streamlit's megabytes (2**20 bytes): "1 MB", "0.5 MB"."""
    return _("{size} MB").format(size=i18n.fmt(n_bytes / 2**20, ".3g"))


def parse_csv(
    data: bytes | str,
    *,
    max_bytes: int = MAX_UPLOAD_BYTES,
    max_rows: int = MAX_TOKENS,
    max_cols: int = MAX_WIDTH,
) -> TokenInput:
    """Parse an uploaded CSV of X: one token per row, one feature per column.

    Accepted: plain numbers separated by commas (or semicolons/tabs); an optional header
    row (skipped if its cells are not all numbers, or if its first cell is empty above a
    column of labels, as in pandas' ``to_csv`` and attnviz's export); an optional first
    column of token labels (if none of its cells is a number, it becomes the labels). Raises
    ``ValueError`` naming the problem (size, ragged rows, a cell that is not a number,
    NaN/inf, too many rows or columns, empty file).
    """
    # 1. the text, within the size limit; 2. its non-empty rows of cells
    rows = _csv_rows(_csv_text(data, max_bytes))
    # 3. an optional column of labels and an optional header row
    labels, body, start = _split_labels(rows)
    # 4. a rectangle of numbers within the limits
    n, d = _body_shape(body, max_rows, max_cols)
    x = np.empty((n, d))
    for i, row in enumerate(body):
        for j, cell in enumerate(row):
            x[i, j] = _cell_value(cell, i, j + start)
    return TokenInput(x, tuple(labels) if labels is not None else default_labels(n))


def _csv_text(data: bytes | str, max_bytes: int) -> str:
    """The upload as text (UTF-8, a BOM dropped); ValueError for a file over ``max_bytes``,
    not UTF-8, binary, or not bytes or text at all."""
    if isinstance(data, bytes):
        if len(data) > max_bytes:
            raise ValueError(
                _("the file is {size} MB; the limit is {limit}").format(
                    size=i18n.fmt(len(data) / 2**20, ".1f"), limit=_mb(max_bytes)
                )
            )
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError(
                _("the file is not UTF-8 text; upload a CSV file (numbers separated by commas)")
            ) from None
    elif isinstance(data, str):
        text = data
        if len(text.encode("utf-8")) > max_bytes:
            raise ValueError(
                _("the text is larger than the limit of {limit}").format(limit=_mb(max_bytes))
            )
    else:
        raise ValueError(f"expected CSV bytes or text, got {type(data).__name__}")
    if "\x00" in text:
        raise ValueError(_("the file contains binary data; upload a CSV file"))
    return text


def _csv_rows(text: str) -> list[list[str]]:
    """The non-empty rows of ``text``, cells stripped; the delimiter is a comma, else a
    semicolon or a tab if the first 4 kB have one. ValueError if there is no row."""
    sample = text[:4096]
    delimiter = ","
    if "," not in sample:
        delimiter = ";" if ";" in sample else ("\t" if "\t" in sample else ",")
    rows = [
        [c.strip() for c in row]
        for row in csv.reader(io.StringIO(text), delimiter=delimiter)
        if any(c.strip() for c in row)
    ]
    if not rows:
        raise ValueError(_("the file is empty: expected one row of numbers per token"))
    return rows


def _split_labels(rows: list[list[str]]) -> tuple[list[str] | None, list[list[str]], int]:
    """(labels or None, the rows of numbers, the column where the numbers start)."""
    # A first column of labels: none of its cells (header included) is a number.
    first_col_labels = all(not _is_number(r[0]) for r in rows)
    start = 1 if first_col_labels else 0
    # A header row: some cell of the first row (after the label column) is not a number,
    # or its first cell is empty above a column of labels: the corner of a table with row
    # names, as pandas (and attnviz's own CSV export) writes it: ",0,1,2".
    corner = first_col_labels and rows[0][0] == "" and len(rows) > 1
    if corner or any(not _is_number(c) for c in rows[0][start:]):
        rows = rows[1:]
        if not rows:
            raise ValueError(_("the file has a header row but no rows of numbers"))
    labels = [r[0] for r in rows] if first_col_labels else None
    return labels, [r[start:] for r in rows], start


def _body_shape(body: list[list[str]], max_rows: int, max_cols: int) -> tuple[int, int]:
    """(N, D) of the rows of numbers; ValueError for ragged rows, no columns, or more
    rows or columns than the limits."""
    widths = {len(r) for r in body}
    if len(widths) != 1:
        counts = [len(r) for r in body]
        bad = next(i for i, c in enumerate(counts) if c != counts[0])
        raise ValueError(
            _(
                "rows have different numbers of values: row 1 has {first}, "
                "row {row} has {count}; every token needs the same number of features"
            ).format(first=counts[0], row=bad + 1, count=counts[bad])
        )
    d = widths.pop()
    n = len(body)
    if d == 0:
        raise ValueError(_("no numeric columns found: expected one number per feature"))
    if n > max_rows:
        raise ValueError(
            _("{n} rows (tokens) is too many; the limit is {max}").format(n=n, max=max_rows)
        )
    if d > max_cols:
        raise ValueError(
            _("{d} columns (features) is too many; the limit is {max}").format(d=d, max=max_cols)
        )
    return n, d


def _cell_value(cell: str, i: int, col: int) -> float:
    """The number in ``cell`` (row ``i`` from 0, file column ``col`` from 0); ValueError
    naming the place if it is not a number, not finite, or larger than 1e6."""
    where = {"row": i + 1, "column": col + 1, "cell": repr(cell)}
    try:
        v = float(cell)
    except ValueError:
        raise ValueError(
            _("row {row}, column {column}: {cell} is not a number").format(**where)
        ) from None
    if not math.isfinite(v):
        raise ValueError(
            _(
                "row {row}, column {column}: {cell} is not a finite number (NaN and inf are "
                "not allowed)"
            ).format(**where)
        )
    if abs(v) > 1e6:
        raise ValueError(
            _(
                "row {row}, column {column}: {cell} is too large (|value| must be at most 1e6)"
            ).format(**where)
        )
    return v

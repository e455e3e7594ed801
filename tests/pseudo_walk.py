"""The pseudo-language walk (issue 45): every page run at ``?lang=xx`` (every message
``⟦…⟧``), and each text a reader sees that did not pass through the catalogs.

``python tests/pseudo_walk.py`` prints, per page, the texts with English outside ``⟦…⟧``;
``tests/test_i18n_pseudo.py`` asserts there are none. What is not a message is left out before
the check: numbers, LaTeX (``$…$``, ``\\(…\\)``), inline code, token labels (``t0``), the
names of models, libraries and people, and what the user typed.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from board_view import figures_of  # noqa: E402
from page_words import texts_of  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from attnviz.ui import pages as ui_pages  # noqa: E402

APP = str(HERE.parent / "app.py")
#: Words that are names, not messages: kept as they are in every language (the last ones:
#: the engine's fields, which the Notebooks page names as the code does).
NAMES = frozenset(
    [
        "softmax",
        "pytorch",
        "numpy",
        "torch",
        "minilm",
        "smollm",
        "smollm2",
        "transformer",
        "transformers",
        "bert",
        "gpt",
        "llama",
        "gemma",
        "bart",
        "marian",
        "csv",
        "npz",
        "json",
        "latex",
        "html",
        "png",
        "svg",
        "url",
        "qr",
        "udl",
        "olsson",
        "prince",
        "vaswani",
        "mathml",
        "python",
        "plotly",
        "streamlit",
        "github",
        "onnx",
        "safetensors",
        "gguf",
        "attnviz",
        "nan",
        "concat",
        "logits",
        "xavier",
        "kaggle",
        "src",
        "tgt",
        "out",
        "output",
        "weights",
        "scores",
        "queries",
        "keys",
        "variance",
    ]
)
_WRAPPED = re.compile(r"⟦[^⟦⟧]*⟧")
_NOT_WORDS = re.compile(
    r"\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|`[^`]*`|https?://\S+|<[^>]*>|&\w+;|%\{[^}]*\}"
    r"|\b[tTkKqQ]\d+\b|\b\w*\d\w*\b|:material/\w+:|:\w+\[|\b[\w.]+\.\w+\([^)]*\)",
    re.S,
)
_WORD = re.compile(r"[A-Za-z]{3,}")


def unwrapped(text: str, own: set[str] = frozenset()) -> list[str]:
    """The English words of ``text`` outside ``⟦…⟧`` (names, code, math, tokens aside)."""
    rest, before = str(text), None
    while rest != before:  # a message inside a message: ⟦… ⟦…⟧ …⟧
        before, rest = rest, _WRAPPED.sub(" ", rest)
    rest = _NOT_WORDS.sub(" ", rest)
    return [w for w in _WORD.findall(rest) if w.lower() not in NAMES and w not in own]


def reader_texts(at: AppTest) -> list[str]:
    """What a reader sees: the page's writing, widget labels and options, the charts' words
    (a table's column names are left out: its shown headers are its column_config's)."""
    columns = {str(c) for df in at.dataframe for c in df.value.columns}
    out = [t for t in texts_of(at) if t not in columns]
    for kind in ("slider", "selectbox", "radio", "checkbox", "toggle", "number_input",
                 "text_input", "text_area", "multiselect", "select_slider"):  # fmt: skip
        for w in at.get(kind):
            out.append(getattr(w, "label", "") or "")
            out.append(getattr(w, "help", "") or "")
    for fig in figures_of(at).values():
        layout = fig.get("layout", {})
        title = layout.get("title", {})
        out.append(title.get("text", "") if isinstance(title, dict) else str(title))
        for name, axis in layout.items():
            if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
                t = axis.get("title", {})
                out.append(t.get("text", "") if isinstance(t, dict) else str(t))
        for trace in fig.get("data", []):
            bar = trace.get("colorbar", {}).get("title", {})
            out.append(bar.get("text", "") if isinstance(bar, dict) else str(bar))
    return [t for t in out if t]


def run_page(slug: str, present: bool = False) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"lang": "xx", **({"present": "1"} if present else {})})
    at.run()
    entry = ui_pages.page(slug)
    if entry is not ui_pages.PAGES[0]:
        at.switch_page(entry.file).run()
    return at


def unwrapped_texts(slug: str, present: bool = False) -> list[str]:
    """The texts of page ``slug`` with English outside ``⟦…⟧`` (and the page's errors)."""
    return walk([slug], present)[slug]


def walk(slugs=None, present: bool = False) -> dict[str, list[str]]:
    """Page slug -> the texts with English outside ``⟦…⟧``."""
    out = {}
    for entry in ui_pages.PAGES:
        if slugs and entry.slug not in slugs:
            continue
        at = run_page(entry.slug, present)
        errors = [e.value for e in at.exception] + [e.value for e in at.error]
        bad = [f"(the page failed) {e}" for e in errors]
        bad += [t for t in reader_texts(at) if unwrapped(t)]
        out[entry.slug] = sorted(set(bad))
    return out


if __name__ == "__main__":
    os.environ["ATTNVIZ_PSEUDO"] = "1"  # the test language xx (attnviz.i18n)
    total = 0
    for slug, bad in walk(sys.argv[1:] or None).items():
        total += len(bad)
        print(f"== {slug}: {len(bad)} texts not through the catalogs")
        for t in bad:
            print("   ", t[:160].replace("\n", " "))
    print(f"total {total}")

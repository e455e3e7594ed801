"""The pseudo-language walk (issue 45): every page run at ``?lang=xx`` (every message
``⟦…⟧``), and each text a reader sees that did not pass through the catalogs.

``python tests/pseudo_walk.py`` prints, per page, the texts with English outside ``⟦…⟧``;
``tests/test_pseudo.py`` asserts there are none. What is not a message is left out before
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
os.environ["ATTNVIZ_PSEUDO"] = "1"

from board_view import figures_of  # noqa: E402
from page_words import texts_of  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from attnviz.ui import pages as ui_pages  # noqa: E402

APP = str(HERE.parent / "app.py")
#: Words that are names, not messages: kept as they are in every language.
NAMES = {
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
}
_WRAPPED = re.compile(r"⟦[^⟦⟧]*⟧")
_NOT_WORDS = re.compile(
    r"\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|`[^`]*`|https?://\S+|<[^>]*>|&\w+;|%\{[^}]*\}"
    r"|\b[tTkKqQ]\d+\b|\b\w*\d\w*\b|:material/\w+:",
    re.S,
)
_WORD = re.compile(r"[A-Za-z]{3,}")


def unwrapped(text: str, own: set[str] = frozenset()) -> list[str]:
    """The English words of ``text`` outside ``⟦…⟧`` (names, code, math, tokens aside)."""
    rest = _NOT_WORDS.sub(" ", _WRAPPED.sub(" ", str(text)))
    return [w for w in _WORD.findall(rest) if w.lower() not in NAMES and w not in own]


def reader_texts(at: AppTest) -> list[str]:
    """What a reader sees: the page's writing, widget labels and options, the charts' words."""
    out = list(texts_of(at))
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


def run_page(slug: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"lang": "xx"})
    at.run()
    entry = ui_pages.page(slug)
    if entry is not ui_pages.PAGES[0]:
        at.switch_page(entry.file).run()
    return at


def walk(slugs=None) -> dict[str, list[str]]:
    """Page slug -> the texts with English outside ``⟦…⟧``."""
    out = {}
    for entry in ui_pages.PAGES:
        if slugs and entry.slug not in slugs:
            continue
        at = run_page(entry.slug)
        bad = [t for t in reader_texts(at) if unwrapped(t)]
        out[entry.slug] = sorted(set(bad))
    return out


if __name__ == "__main__":
    total = 0
    for slug, bad in walk(sys.argv[1:] or None).items():
        total += len(bad)
        print(f"== {slug}: {len(bad)} texts not through the catalogs")
        for t in bad:
            print("   ", t[:160].replace("\n", " "))
    print(f"total {total}")

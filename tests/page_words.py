"""What a student reads on a page run in AppTest, and the rules it must pass (issue 25):
no scientific notation ("8.41e-01"), no Python booleans ("NaN anywhere: False"), no
"1 keys" or "row(s)". ``tests/test_app.py`` reads every page under every configuration with
:func:`page_offences`; ``tests/teaching/test_wording.py`` checks the rules themselves."""

from __future__ import annotations

import json
import re

from board_view import figures_of

#: "8.41e-01", "2.2e-16", "1E+03": a number in scientific notation.
SCIENTIFIC = re.compile(r"(?<![\w.])[-+]?\d+(\.\d+)?[eE][-+]?\d+\b")
#: A Python boolean shown as a value ("NaN anywhere: False", "scale = True", "(False)"),
#: not the word ("True values" is a notebook's own label).
BOOLEAN = re.compile(r"[:=(]\s*(True|False)\b|\b(True|False)\s*[).,;]|\b(True|False)$")
#: Plurals written for a count of 1, or hedged: "other 1 keys", "1 rows", "row(s)".
BAD_PLURAL = re.compile(r"(?<![\d.])1 (other )?(keys|rows|heads|tokens|values|matrices)\b|\w\(s\)")
#: A plotly number format in scientific notation ("%{z:.2e}").
PLOTLY_SCIENTIFIC = re.compile(r"%\{[^}]*:[^}]*e\}")


def texts_of(at) -> list[str]:
    """Everything the run writes for a reader, as strings."""
    out: list[str] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning",
                 "success", "error", "text"):  # fmt: skip
        out += [el.value for el in at.get(kind)]
    out += [f"{m.label}: {m.value}" for m in at.metric]
    out += [e.label for e in at.expander]
    out += [b.label for b in (*at.button, *at.get("download_button"))]
    out += [t.label for t in at.tabs]
    for df in at.dataframe:
        frame = df.value
        out += [str(c) for c in frame.columns]
        out += [str(v) for v in frame.to_numpy().ravel() if isinstance(v, str | bool)]
    return out


def figure_texts(at) -> list[str]:
    """The words of every chart: titles, axis and colour-bar titles, trace names, hover
    templates and the values written in cells."""
    out: list[str] = []
    for key, fig in figures_of(at).items():
        layout = fig.get("layout", {})
        out.append(json.dumps(layout.get("title", {}).get("text", "")))
        for name, axis in layout.items():
            if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
                out.append(str(axis.get("title", {}).get("text", "")))
        for trace in fig.get("data", []):
            out += [f"{key}: {trace.get(f, '')}" for f in ("name", "hovertemplate")]
            text = trace.get("text")
            if isinstance(text, list):
                out += [str(t) for row in text for t in (row if isinstance(row, list) else [row])]
    return out


def offences(texts: list[str]) -> list[str]:
    bad = []
    for t in texts:
        for rule in (SCIENTIFIC, BOOLEAN, BAD_PLURAL, PLOTLY_SCIENTIFIC):
            if rule.search(t):
                bad.append(f"{rule.pattern!r}: {t[:200]}")
    return bad


def page_offences(at) -> list[str]:
    """Every text of the run ``at`` (its writing and its charts' words) that breaks a rule."""
    return offences(texts_of(at) + figure_texts(at))

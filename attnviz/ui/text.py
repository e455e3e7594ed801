"""Text from users, made safe for Streamlit's Markdown (at the bottom of the ui package:
no other ui module imported, so :mod:`~attnviz.ui.state`, :mod:`~attnviz.ui.page` and the
sidebar can all use it)."""

from __future__ import annotations

import re


def md_text(label: object) -> str:
    """``label`` as Markdown that Streamlit shows literally: a code span.

    Streamlit renders Markdown in st.markdown, st.caption, st.subheader, alerts, metric
    and widget labels: ``[visit](https://…)`` would become a link, ``**x**`` bold,
    ``:smile:`` an emoji, ``$x$`` maths. Inside a code span none of that applies, so
    every text that comes from a user (token labels, file names, URL values) goes
    through this function before it reaches Markdown. The fence is one backtick longer
    than the longest run of backticks in the text; line breaks become spaces.
    """
    text = " ".join(str(label).splitlines()) or " "
    longest = max(len(run) for run in re.findall("`*", text))
    fence = "`" * (longest + 1)
    # CommonMark strips one space from each end of a code span that has a space at both
    # ends (and is not all spaces); a backtick at an end would join the fence: pad both.
    edge = text[0] == "`" or text[-1] == "`" or (text[0] == text[-1] == " " and text.strip())
    pad = " " if edge else ""
    return f"{fence}{pad}{text}{pad}{fence}"

"""Accessibility of the app's own markup (issue 18, WCAG 2.1 AA), once per run.

:func:`setup` (called by ``app.py`` after the navigation) injects one stylesheet:

1. **Visible focus** (2.4.7, 1.4.11): every focusable control of the page shows a 3 px
   :data:`FOCUS` ring when it has keyboard focus (``:focus-visible``), drawn 2 px outside
   the control over a 5 px white halo, so the ring is always seen on white (9.6:1), also
   beside a red primary button. The inputs of sliders, radios, checkboxes and toggles are
   visually hidden inside what is drawn (a slider's thumb, a radio's option): that gets
   the ring (Streamlit's own is a pale glow, or nothing).
2. **Key hints** (1.4.3): the key hint Streamlit draws in a button with a shortcut (the
   presenter view's "PageDown") at full opacity in the button's own text colour (it was
   white at 60% on the primary colour: 2.8:1).
3. **Code in captions** (1.4.3): the tokens a real-model page lists in its caption are code
   spans, green (Streamlit's code colour) faded to the caption's shade: 3.0:1. They take
   the caption's own colour.
4. **Reduced motion** (2.3.3): with ``prefers-reduced-motion: reduce`` no transition,
   animation or smooth scrolling.

The text colours are the theme's (``.streamlit/config.toml``: ``textColor``, whose 60% shade
Streamlit uses for captions and help text, and ``primaryColor``).
"""

from __future__ import annotations

from attnviz.ui import streamlit_private

#: The focus ring's colour (dark blue: 9.6:1 on white, >= 3:1 needed).
FOCUS = "#1c3f94"


def setup() -> None:
    """First in every run (app.py): the hidden boards hidden, the focus ring, key hints,
    code highlighting at >= 4.5:1 on the code boxes' background (Streamlit's blue, green
    and grey tokens are 3-4:1), reduced motion."""
    streamlit_private.accessibility_css()  # the ring is FOCUS

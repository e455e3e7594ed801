"""In-app links drawn as buttons: a lesson's Back and Next (:mod:`attnviz.ui.tour`) and the
Lessons page's "Start the tour", "Present it" (``pages/lessons.py``). ``board/js/navlinks.js``
follows a link marked ``data-attnviz-nav`` within the session (``history.pushState`` and a
``popstate``, as the browser's back button does), its key on a slide (PageDown / PageUp),
and shows a lesson's Resume link when the browser kept its progress.
"""

from __future__ import annotations

import html


def link_html(
    label: str, url: str, *, primary: bool = False, key: str = "", shortcut: str = "",
    resume: str = "",
) -> str:  # fmt: skip
    """An in-app link as a button (``data-attnviz-nav``: followed within the session;
    ``shortcut``: the key that follows it on a slide, PageDown/PageUp; ``resume``: a
    lesson's slug, the link hidden until navlinks.js finds that lesson's progress in the
    browser's storage and points it there)."""
    kind = "primary" if primary else "secondary"
    keys = f' data-attnviz-key="{shortcut}" aria-keyshortcuts="{shortcut}"' if shortcut else ""
    keys += f' data-attnviz-resume="{html.escape(resume)}" hidden' if resume else ""
    return (
        f'<a class="tour-link tour-{kind}" data-tour="{key}" data-attnviz-nav{keys} '
        f'href="{html.escape(url)}" target="_self">{html.escape(label)}</a>'
    )


#: The links' style: one element of its own, the same on every page that has them.
CSS = """<style>
.tour-links{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.tour-link{display:inline-flex;align-items:center;min-height:44px;padding:0 1rem;
 border-radius:.5rem;border:1px solid rgba(49,51,63,.3);text-decoration:none!important;
 color:inherit!important;font-weight:600}
.tour-primary{background:#d6336c;border-color:#d6336c;color:#fff!important}
.tour-link:focus-visible{outline:3px solid #1c7ed6;outline-offset:2px}
.tour-link[hidden]{display:none}
</style>"""

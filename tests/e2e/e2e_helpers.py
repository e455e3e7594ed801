"""In-browser checks shared by the e2e tests (JavaScript run in the page through playwright)."""

from __future__ import annotations

import re
from functools import cache
from urllib.parse import parse_qs, urlparse

import plotly.colors

# Colour scales that stay readable with the common colour-vision deficiencies: the
# perceptually uniform sequential ones (viridis family, cividis) and ColorBrewer's
# colour-blind-safe diverging and sequential single-hue/multi-hue scales.
COLORBLIND_SAFE = (
    "Viridis",
    "Cividis",
    "Plasma",
    "Inferno",
    "Magma",
    "RdBu",
    "PuOr",
    "BrBG",
    "PRGn",
    "Greys",
    "Blues",
    "Greens",
    "Oranges",
    "Purples",
    "YlGnBu",
    "YlOrRd",
    "PuBu",
    "BuPu",
)


def _rgb(colour: str) -> tuple[int, int, int]:
    colour = colour.strip().lower()
    if colour.startswith("#"):
        r, g, b = plotly.colors.hex_to_rgb(colour)
        return int(r), int(g), int(b)
    nums = re.findall(r"[\d.]+", colour)
    return tuple(round(float(v)) for v in nums[:3])


@cache
def _safe_colours() -> dict[str, tuple[tuple[float, tuple[int, int, int]], ...]]:
    out = {}
    for name in COLORBLIND_SAFE:
        for variant in (name, name + "_r"):
            scale = plotly.colors.get_colorscale(variant)
            out[variant] = tuple((round(float(p), 4), _rgb(c)) for p, c in scale)
    return out


def colorscale_name(scale) -> str | None:
    """The allow-listed name of a colour scale (a name or a list of [position, colour])."""
    if scale is None:
        return None
    if isinstance(scale, str):
        names = {n.lower(): n for n in _safe_colours()}
        return names.get(scale.lower())
    key = tuple((round(float(p), 4), _rgb(c)) for p, c in scale)
    if len({colour for _, colour in key}) == 1:
        return "constant"  # one flat colour (e.g. "may attend" cells): no hue to confuse
    for name, colours in _safe_colours().items():
        if colours == key:
            return name
    return None


# Every trace colour scale in every plotly chart of the page (traces and layout coloraxes).
COLORSCALES_JS = """
() => {
  const out = [];
  window.__allPlots().forEach((gd, i) => {
    (gd.data || []).forEach((t, j) => {
      const scale = t.colorscale || (t.marker && t.marker.colorscale);
      if (scale) out.push({chart: i, trace: j, type: t.type, scale});
    });
    const layout = gd.layout || {};
    Object.keys(layout).filter(k => k.startsWith('coloraxis')).forEach(k => {
      if (layout[k] && layout[k].colorscale)
        out.push({chart: i, trace: k, type: 'coloraxis', scale: layout[k].colorscale});
    });
  });
  return out;
}
"""

# Input controls without an accessible name (aria-label, aria-labelledby, <label>, title,
# or a button's text). Plotly's mode bar buttons are included.
UNLABELLED_CONTROLS_JS = """
() => {
  const text = (el) => (el ? (el.getAttribute('aria-label') || el.textContent || '') : '').trim();
  const name = (el) => {
    const aria = (el.getAttribute('aria-label') || '').trim();
    if (aria) return aria;
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const t = by.split(/\\s+/).map(id => text(document.getElementById(id))).join(' ').trim();
      if (t) return t;
    }
    if (el.labels && el.labels.length) {
      const t = Array.from(el.labels).map(l => l.textContent).join(' ').trim();
      if (t) return t;
    }
    const role = el.getAttribute('role');
    if (el.tagName === 'BUTTON' || el.tagName === 'A' || role === 'button' || role === 'tab') {
      const t = (el.textContent || '').trim();
      if (t) return t;
    }
    return (el.getAttribute('title') || '').trim();
  };
  const sel = 'input:not([type=hidden]), select, textarea, button, [role=slider], ' +
              '[role=combobox], [role=checkbox], [role=switch], [role=radio], ' +
              '[role=spinbutton], [role=tab], [role=button]';
  return Array.from(document.querySelectorAll(sel))
    .filter(el => !name(el))
    .map(el => el.outerHTML.slice(0, 200));
}
"""

# Shapes (rows, columns) of the z matrix of every heatmap, with the chart's title (HTML tags
# removed) and its axes' tick labels. Plotly.js keeps the figure's z as sent (base64 "bdata"
# for float32), so the shape is read from the decoded trace in gd._fullData.
HEATMAPS_JS = """
() => {
  const out = [];
  const strip = (s) => String(s || '').replace(/<[^>]*>/g, '');
  window.__allPlots().forEach((gd, i) => {
    const layout = gd.layout || {};
    const title = strip((layout.title || {}).text);
    (gd._fullData || []).forEach((t, j) => {
      if (t.type !== 'heatmap' || !t.z) return;
      const rows = t.z.length;
      const cols = rows ? t.z[0].length : 0;
      const ax = (id) => layout[id[0] + 'axis' + id.slice(1)] || {};
      const xa = ax(t.xaxis || 'x'), ya = ax(t.yaxis || 'y');
      out.push({chart: i, trace: j, title, rows, cols,
                xtitle: strip((xa.title || {}).text), ytitle: strip((ya.title || {}).text),
                xticks: xa.ticktext ? Array.from(xa.ticktext).map(String) : null,
                yticks: ya.ticktext ? Array.from(ya.ticktext).map(String) : null});
    });
  });
  return out;
}
"""

# Axis titles that a student cannot read whole: cut at the chart's edges, or crossing the
# chart's own title (a vertical title centred on a short plot reached into it).
AXIS_TITLE_PROBLEMS_JS = """
() => {
  const out = [];
  const box = (el) => el.getBoundingClientRect();
  const meets = (a, b) =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  window.__allPlots().forEach((gd, i) => {
    const g = box(gd);
    const name = String(((gd.layout || {}).title || {}).text || '').replace(/<[^>]*>/g, '');
    const titles = Array.from(gd.querySelectorAll('.gtitle')).map(box);
    gd.querySelectorAll('.g-xtitle text, .g-ytitle text').forEach((t) => {
      const r = box(t);
      if (!r.width) return;
      if (r.left < g.left - 1 || r.right > g.right + 1 || r.top < g.top - 1)
        out.push(`chart ${i} ${name}: axis title '${t.textContent}' cut at the chart's edge`);
      if (titles.some((b) => meets(r, b)))
        out.push(`chart ${i} ${name}: axis title '${t.textContent}' crosses the chart title`);
    });
  });
  return out;
}
"""


def axis_title_problems(session) -> list[str]:
    return session.page.evaluate(AXIS_TITLE_PROBLEMS_JS)


# The tick labels plotly drew on each x/y axis of every chart (colour bars excluded).
AXIS_TICKS_JS = """
() => Array.from(window.__allPlots()).map((gd, i) => ({
  chart: i,
  title: String(((gd.layout || {}).title || {}).text || '').replace(/<[^>]*>/g, ''),
  heatmap: (gd._fullData || []).some(t => t.type === 'heatmap'),
  axes: Array.from(gd.querySelectorAll('g.xaxislayer-above, g.yaxislayer-above')).map(
    layer => Array.from(layer.querySelectorAll('g.xtick text, g.ytick text'))
      .map(t => t.textContent)),
}))
"""

_NUMBER = re.compile(r"^[-+]?\d+(\.\d+)?([eE][-+]?\d+)?$")


def axis_tick_problems(charts: list[dict]) -> list[str]:
    """Axes a student cannot read: a numeric tick label shown twice on one axis (plotly's
    log-axis minor labels "1, 2, 5, 10, 2, 5, 100" drop the power) and fractional ticks on
    a heatmap, whose axes count rows and columns."""
    problems = []
    for chart in charts:
        for labels in chart["axes"]:
            numbers = [t.replace("\u2212", "-") for t in labels]
            numbers = [t for t in numbers if _NUMBER.match(t)]
            if len(set(numbers)) != len(numbers):
                problems.append(f"chart {chart['chart']} {chart['title']!r}: repeated {labels}")
            if chart["heatmap"] and any("." in t for t in numbers):
                problems.append(f"chart {chart['chart']} {chart['title']!r}: half-cells {labels}")
    return problems


#: The main column's shown headings, in document order: (level, text); a board's cell panel
#: is one of them when it is open.
HEADINGS_JS = """() => Array.from(document.querySelectorAll(
    '[data-testid="stMain"] :is(h1, h2, h3, h4, h5, h6)'))
  .filter(h => h.offsetParent !== null).map(h => [+h.tagName[1], h.innerText.trim()])"""


def skipped_levels(headings: list[list]) -> list[tuple]:
    """The neighbours in ``headings`` (:data:`HEADINGS_JS`) where the outline goes down by
    more than one level (an h3 right after an h1: axe's heading-order)."""
    return [(a, b) for a, b in zip(headings, headings[1:], strict=False) if b[0] > a[0] + 1]


# --------------------------------------------------------------------------- widgets


def nav_titles(session) -> list[str]:
    """The titles of the sidebar's page links, in order."""
    texts = session.page.locator('[data-testid="stSidebarNavLink"]').all_inner_texts()
    # A link's text is "<icon>\n\n<title>": the title is the last line.
    return [t.strip().splitlines()[-1].strip() for t in texts]


def click_page(session, title: str) -> None:
    """Go to the page ``title`` by its sidebar link (no click if it is the current page)."""
    links = session.page.locator('[data-testid="stSidebarNavLink"]')
    link = links.filter(has_text=title)
    assert link.count() == 1, f"no single sidebar link for {title!r}"
    if link.get_attribute("aria-current") != "page":
        session.rerun_after(link.click)


def heatmaps(session) -> list[dict]:
    return session.page.evaluate(HEATMAPS_JS)


def scores_shape(session) -> tuple[int, int]:
    found = [h for h in heatmaps(session) if h["title"].startswith("Scores")]
    assert found, f"no 'Scores' heatmap on the page: {[h['title'] for h in heatmaps(session)]}"
    return found[0]["rows"], found[0]["cols"]


def slider_value(session, key: str) -> int:
    return int(session.page.locator(f'.st-key-{key} input[type="range"]').input_value())


def radio_value(session, key: str) -> str:
    """The text of a radio group's checked option."""
    checked = session.page.locator(
        f'.st-key-{key} [data-testid="stRadioOption"]:has(input:checked)'
    )
    return checked.inner_text().strip()


def selectbox_input(session, key: str):
    """The combobox input of a selectbox (its value is the shown option)."""
    return session.page.locator(f'.st-key-{key} input[role="combobox"]')


def choose_option(session, key: str, value: str) -> None:
    """Type ``value`` into selectbox ``key`` and press Enter, as a keyboard user picks it."""
    selectbox_input(session, key).focus()
    session.page.keyboard.type(value)
    session.page.wait_for_timeout(300)
    session.rerun_after(lambda: session.page.keyboard.press("Enter"))


def choose_radio(session, key: str, label: str) -> None:
    options = session.page.locator(f'.st-key-{key} [data-testid="stRadioOption"]')
    option = options.filter(has_text=re.compile(rf"^\s*{re.escape(label)}\s*$"))
    assert option.count() == 1, f"{key}: no single option {label!r}"
    session.rerun_after(option.click)


def query(session) -> dict[str, list[str]]:
    return parse_qs(urlparse(session.page.url).query)


def upload(session, name: str, content: bytes, expect_rerun: bool = True) -> None:
    files = [{"name": name, "mimeType": "text/csv", "buffer": content}]
    field = session.page.locator('.st-key-upload input[type="file"]')
    if expect_rerun:
        session.rerun_after(lambda: field.set_input_files(files=files))
    else:
        field.set_input_files(files=files)


def alerts(session, kind: str = "") -> list[str]:
    sel = f'[data-testid="stAlertContent{kind}"]' if kind else '[data-testid="stAlert"]'
    return session.page.locator(sel).all_inner_texts()

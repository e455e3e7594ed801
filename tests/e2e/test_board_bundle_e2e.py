"""The vendored plotly.js bundle (core, bar, heatmap) in a real browser (issue 27).

- Its own schema: the trace types it registers are exactly those ``board_assets.trace_types``
  reads from its text (the fast tests rely on that reading), and it is the version of the
  plotly package.
- Every figure of ``tests/figure_catalogue.py`` is checked by ``Plotly.validate`` in the
  bundle and in the plotly package's full plotly.min.js: the bundle reports nothing the full
  file does not (no missing trace type, component or attribute), and draws each figure.
- The app loads the bundle (not the full file), and plotly.py's JSON features the board uses
  work with it: a heatmap's ``z`` as base64 typed arrays (``bdata``), its cell text by
  ``texttemplate``.
"""

from __future__ import annotations

import numpy as np
import pytest
from e2e_helpers import click_page

from attnviz.ui.board import PLOTLY, figure_json
from attnviz.ui.board import assets as board_assets
from tests.figure_catalogue import catalogue

pytestmark = pytest.mark.e2e

ORIGIN = "http://bundle.test"
PAGE = "<!doctype html><html><body></body></html>"

VALIDATE_JS = """(figs) => {
  const out = {};
  for (const [name, f] of Object.entries(figs)) {
    out[name] = (Plotly.validate(f.data, f.layout) || []).map(e => e.code + ' ' + e.astr);
  }
  return out;
}"""

DRAW_JS = """async (figs) => {
  const out = {};
  for (const [name, f] of Object.entries(figs)) {
    const gd = document.createElement('div');
    gd.style.cssText = 'width:800px;height:500px';
    document.body.appendChild(gd);
    try {
      await Plotly.newPlot(gd, f.data, f.layout);
      out[name] = gd._fullData.map(t => t.type + (t.visible === true ? '' : ':' + t.visible));
    } catch (e) { out[name] = 'error: ' + e.message; }
    Plotly.purge(gd);
    gd.remove();
  }
  return out;
}"""


def _open(browser, script) -> tuple:
    """A blank page of its own origin with one plotly.js file loaded."""
    ctx = browser.new_context()
    page = ctx.new_page()

    def route(r):
        if r.request.url.endswith("/plotly.js"):
            return r.fulfill(status=200, content_type="text/javascript", path=str(script))
        return r.fulfill(status=200, content_type="text/html", body=PAGE)

    page.route(ORIGIN + "/**", route)
    page.goto(ORIGIN + "/")
    page.add_script_tag(url=ORIGIN + "/plotly.js")
    return ctx, page


def test_the_bundle_registers_the_trace_types_read_from_its_text(browser):
    js = board_assets.bundle()
    ctx, page = _open(browser, js)
    try:
        version, traces = page.evaluate(
            "() => [Plotly.version, Object.keys(Plotly.PlotSchema.get().traces)]"
        )
    finally:
        ctx.close()
    assert version == board_assets.script_version(js) == PLOTLY["version"]
    assert set(traces) == board_assets.trace_types(js)


def test_every_figure_validates_in_the_bundle_as_in_the_full_plotly_js_and_draws(browser):
    figs = {name: figure_json(fig) for name, fig in catalogue().items()}
    found = {}
    for which, script in (("bundle", board_assets.bundle()), ("full", board_assets.plotly_js())):
        ctx, page = _open(browser, script)
        try:
            found[which] = page.evaluate(VALIDATE_JS, figs)
            if which == "bundle":
                drawn = page.evaluate(DRAW_JS, figs)
        finally:
            ctx.close()
    extra = {
        name: sorted(set(found["bundle"][name]) - set(found["full"][name]))
        for name in figs
        if set(found["bundle"][name]) - set(found["full"][name])
    }
    assert not extra, extra  # what the bundle lacks and the full file has
    for name, fig in figs.items():
        types = [t.get("type", "scatter") for t in fig["data"]]
        assert drawn[name] == types, (name, drawn[name])
    # the comparison can fail: a 3-D trace and a slider are reported by the bundle only
    ctx, page = _open(browser, board_assets.bundle())
    try:
        bad = page.evaluate(
            VALIDATE_JS,
            {"x": {"data": [{"type": "scatter3d", "z": [1]}], "layout": {"sliders": [{}]}}},
        )["x"]
    finally:
        ctx.close()
    assert "value type" in bad and any(e.startswith("invisible sliders") for e in bad), bad


def test_the_app_draws_bdata_and_texttemplate_with_the_bundle(session):
    session.open("/?N=5&D=8&heads=2")
    session.page.wait_for_function(
        '() => !!document.querySelector(\'.attnviz-board .cell[data-key="pg_weights"] '
        ".js-plotly-plot')"
    )
    got = session.page.evaluate(
        """() => {
          const gd = document.querySelector(
            '.attnviz-board .cell[data-key="pg_weights"] .js-plotly-plot');
          const src = Array.from(document.querySelectorAll('script[data-attnviz="plotly"]'))
            .map(s => s.dataset.url);
          return {version: Plotly.version, src,
                  has3d: 'scatter3d' in Plotly.PlotSchema.get().traces,
                  z: gd._fullData[0].z.map(r => Array.from(r)),
                  bdata: typeof gd.data[0].z === 'object' && 'bdata' in gd.data[0].z,
                  text: Array.from(gd.querySelectorAll('.heatmaplayer text'))
                    .map(t => t.textContent)};
        }"""
    )
    assert got["version"] == PLOTLY["version"] and not got["has3d"]
    assert len(got["src"]) == 1 and "/vendor/plotly-attnviz-" in got["src"][0], got["src"]
    assert got["bdata"], "the figure reached plotly.js without a typed array"
    z = np.array(got["z"], dtype=float)
    assert z.shape == (5, 5) and np.allclose(z.sum(axis=1), 1.0, atol=1e-5)  # decoded weights
    # texttemplate "%{text}": every cell's two-decimal weight (no leading zero), in the cell
    want = [format(v, ".2f").replace("0.", ".", 1) for v in z.ravel()]
    assert sorted(got["text"]) == sorted(want), got["text"]
    click_page(session, "Multi-head")
    session.assert_healthy("multi-head on the bundle")

"""The board's hook for per-chart modules (attnviz/ui/board/js/board.js, `attach(chartElement,
figure, api)`), with attnviz/ui/board/js/example_module.js loaded through $ATTNVIZ_BOARD_MODULES:
attached to every chart after each draw, its api links (hover) and selects (click) like the
mouse does."""

from __future__ import annotations

import pytest
from e2e_app import start_app_server, stop_app_server
from e2e_helpers import selectbox_input

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def app_server():
    server = start_app_server(extra_env={"ATTNVIZ_BOARD_MODULES": "example_module.js"})
    yield server
    stop_app_server(server)
    out = server.output()
    server.log_path.unlink(missing_ok=True)
    assert "Traceback (most recent call last)" not in out, out


ATTACHED_JS = """() => Object.fromEntries(Array.from(
  document.querySelectorAll('.attnviz-board .cell')).map(c => {
    const gd = c.querySelector('.js-plotly-plot');
    return [c.dataset.key, {n: Number(gd.dataset.exampleAttached || 0),
                            role: gd.dataset.exampleRole || null,
                            notes: c.querySelectorAll('.example-module-note').length,
                            api: !!gd.__exampleApi}];
  }))"""


def test_every_chart_gets_the_module_and_its_api_links_and_selects(session):
    session.open("/?N=6")
    attached = session.page.evaluate(ATTACHED_JS)
    assert {"pg_scores", "pg_weights", "pg_q", "pg_qbars"} <= set(attached)
    assert all(a["n"] >= 1 and a["api"] and a["notes"] == 1 for a in attached.values()), attached
    assert attached["pg_weights"]["role"] == "weights"
    assert attached["pg_scores"]["role"] == "scores"
    # a slider move redraws: the module is attached again, its previous attach undone
    n_before = attached["pg_weights"]["n"]
    thumb = session.page.locator(".st-key-N input[type='range']").first
    thumb.focus()
    session.rerun_after(lambda: session.page.keyboard.press("ArrowRight"))
    attached = session.page.evaluate(ATTACHED_JS)
    assert attached["pg_weights"]["n"] > n_before
    assert all(a["notes"] == 1 for a in attached.values()), attached
    # api.hover(i, j) on the weights: the linked cells light up in another board (Q's row)
    hl = session.page.evaluate(
        """() => {
          const gd = document.querySelector('.attnviz-board .cell[data-key="pg_weights"] '
                                             + '.js-plotly-plot');
          gd.__exampleApi.api.hover(2, 4);
          return {q: document.querySelectorAll(
                    '.attnviz-board .cell[data-key="pg_q"] .hl').length,
                  heard: gd.__exampleApi.links.slice(-1)[0]};
        }"""
    )
    assert hl["q"] > 0 and hl["heard"] == "2,4", hl
    # api.select(i, j): the same as a click on that cell, query i is selected
    assert selectbox_input(session, "query").input_value() == "0"
    session.rerun_after(
        lambda: session.page.evaluate(
            """() => document.querySelector(
              '.attnviz-board .cell[data-key="pg_weights"] .js-plotly-plot')
              .__exampleApi.api.select(3, 1)"""
        )
    )
    assert selectbox_input(session, "query").input_value() == "3"
    assert session.page.evaluate("() => window.__attnvizBoardErrors") == []
    session.assert_healthy("chart modules")

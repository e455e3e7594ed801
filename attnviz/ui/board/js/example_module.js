// An example per-chart module (see the top comment of board.js): not loaded by the app
// unless named in $ATTNVIZ_BOARD_MODULES (the browser tests do, tests/e2e/
// test_board_modules_e2e.py). It shows the hook's contract: attach() runs after each draw
// of a chart, gets the chart's api, may add UI in the chart's cell, and returns the
// function that undoes what it did (called before the next attach and when the chart goes).

export function attach(chartElement, figure, api) {
  const n = Number(chartElement.dataset.exampleAttached || 0) + 1;
  chartElement.dataset.exampleAttached = String(n);
  chartElement.dataset.exampleRole = api.role || "";
  const note = document.createElement("span");
  note.className = "example-module-note";
  note.hidden = true;
  note.textContent = `${api.key}: ${figure.data ? figure.data.length : 0} trace(s)`;
  api.cell.appendChild(note);
  const links = [];
  const off = api.onLink((d) => links.push(d.clear ? "clear" : `${d.query},${d.key}`));
  chartElement.__exampleApi = { api, links }; // read by the browser test
  return () => {
    off();
    note.remove();
    delete chartElement.__exampleApi;
  };
}

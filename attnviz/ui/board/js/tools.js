// attnviz board, per-chart module: the chart's downloads as real buttons under it, and
// plotly's mode bar out of the keyboard's way (issue 18: nested-interactive).
//
// The plot div was role="img" with plotly's mode bar inside: a screen reader reads an image
// and cannot reach buttons inside it, and axe flags focusable content in an image
// (nested-interactive). So the chart becomes a named role="figure" (or role="application"
// once keys.js made it a keyboard stop), plotly's drawing is hidden from assistive
// technology, the mode bar stays for the mouse (zoom, pan, reset, downloads) but leaves the
// Tab order, and the downloads are buttons in the strip under the chart (table.js's
// chartBar), beside "Table": "PNG" and "SVG", named after the chart.
//
// Hook: attach(chartElement, figure, api) after each draw (plotly rebuilds the mode bar);
// api.Plotly (else the page's Plotly), api.key: the file name; api.present: a slide (the
// presenter view), which gets no download buttons (issue 25). The PNG fills a projector's
// width as the mode bar's does (board downloads.js: 1920 px, never below 2x).

import { plainText } from "./figure.js";
import { _, fill } from "./i18n.js";
import { chartBar } from "./table.js";

/** The mode bar's buttons leave the Tab order, plotly's drawing (its SVG, tick labels,
 * mode bar) leaves the accessibility tree, and a role="img" chart becomes a role="figure"
 * named by its label: the table and buttons under it carry the content. */
export function quietModeBar(chartElement) {
  if (chartElement.getAttribute("role") === "img") chartElement.setAttribute("role", "figure");
  for (const c of chartElement.querySelectorAll(".svg-container, .modebar-container")) {
    c.setAttribute("aria-hidden", "true");
  }
  for (const b of chartElement.querySelectorAll(
    ".modebar a, .modebar button, .modebar [tabindex]",
  )) {
    b.setAttribute("tabindex", "-1");
  }
}

export const PROJECTOR_WIDTH = 1920;

/** The PNG scale that makes the chart 1920 px wide (a 1080p projector), at least 2x. */
export function projectorScale(gd) {
  const w = (gd._fullLayout && gd._fullLayout.width) || gd.offsetWidth || PROJECTOR_WIDTH;
  return Math.max(2, PROJECTOR_WIDTH / w);
}

/** The label of a download button: "Download Weights A = softmax(S) as PNG". */
export function downloadLabel(figure, format) {
  const layout = (figure && figure.layout) || {};
  const title = plainText(layout.title && layout.title.text).split(" · ")[0] || _("the chart");
  return fill(_("Download {title} as {format}"), { title, format: format.toUpperCase() });
}

export function attach(chartElement, figure, api = {}) {
  quietModeBar(chartElement);
  if (!chartElement.__attnvizQuiet && chartElement.on) {
    // plotly may rebuild the mode bar after a relayout (zoom, resize)
    chartElement.on("plotly_afterplot", () => quietModeBar(chartElement));
    chartElement.__attnvizQuiet = true;
  }
  const bar = chartBar(chartElement);
  const buttons = bar.querySelector(".attnviz-buttons");
  if (api.present) {
    // a slide (the presenter view) shows no downloads: the normal view has them
    for (const b of buttons.querySelectorAll(".attnviz-download")) b.remove();
    return bar;
  }
  for (const format of ["png", "svg"]) {
    let b = buttons.querySelector(`.attnviz-download[data-format="${format}"]`);
    if (!b) {
      b = chartElement.ownerDocument.createElement("button");
      b.type = "button";
      b.className = "attnviz-download";
      b.dataset.format = format;
      b.textContent = format.toUpperCase();
      b.addEventListener("click", () => {
        const P = b.__api.Plotly || globalThis.Plotly;
        const opts = { format, filename: b.__api.key || "chart" };
        if (format === "png") opts.scale = projectorScale(chartElement);
        return P.downloadImage(chartElement, opts);
      });
      buttons.appendChild(b);
    }
    b.__api = api;
    b.setAttribute("aria-label", downloadLabel(figure, format));
  }
  return bar;
}

// Downloads: the mode bar of every chart, with PNG (projector width) and SVG buttons.

import { _, fill } from "./i18n.js";

// PNG downloads fill a projector's width (1920 px: a 1080p projector, 1.5x a 1280x720
// one) whatever the chart's width on screen, and are never below 2x.
export const PROJECTOR_WIDTH = 1920;

export function projectorScale(gd) {
  const w = (gd._fullLayout && gd._fullLayout.width) || gd.offsetWidth || PROJECTOR_WIDTH;
  return Math.max(2, PROJECTOR_WIDTH / w);
}

/** The plotly config of chart `key`: its mode bar with the two download buttons. */
export function chartConfig(Plotly, key) {
  const name = key || "chart";
  return {
    displaylogo: false,
    responsive: true,
    modeBarButtonsToRemove: ["lasso2d", "select2d", "toImage"],
    modeBarButtonsToAdd: [
      {
        name: "downloadPng",
        title: fill(_("Download plot as a PNG (projector: {width} px wide)"), {
          width: PROJECTOR_WIDTH,
        }),
        icon: Plotly.Icons.camera,
        click: (gd) =>
          Plotly.downloadImage(gd, { format: "png", scale: projectorScale(gd), filename: name }),
      },
      {
        name: "downloadSvg",
        title: _("Download plot as an SVG"),
        icon: Plotly.Icons.disk,
        click: (gd) => Plotly.downloadImage(gd, { format: "svg", filename: name }),
      },
    ],
  };
}

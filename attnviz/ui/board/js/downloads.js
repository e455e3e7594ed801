// Downloads: the mode bar of every chart, with PNG (projector width) and SVG buttons.

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
        title: `Download plot as a PNG (projector: ${PROJECTOR_WIDTH} px wide)`,
        icon: Plotly.Icons.camera,
        click: (gd) =>
          Plotly.downloadImage(gd, { format: "png", scale: projectorScale(gd), filename: name }),
      },
      {
        name: "downloadSvg",
        title: "Download plot as an SVG",
        icon: Plotly.Icons.disk,
        click: (gd) => Plotly.downloadImage(gd, { format: "svg", filename: name }),
      },
    ],
  };
}

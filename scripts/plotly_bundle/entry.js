// plotly.js with what attnviz draws: its core (which holds the scatter trace and every layout
// component: axes, colour bars, shapes, annotations, error bars, the mode bar) and the bar and
// heatmap traces. tests/ui/test_board_assets.py fails if a figure of the app needs another one.
"use strict";

var Plotly = require("plotly.js/lib/core");

Plotly.register([require("plotly.js/lib/bar"), require("plotly.js/lib/heatmap")]);

module.exports = Plotly;

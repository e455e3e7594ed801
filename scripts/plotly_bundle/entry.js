// plotly.js with what attnviz draws: its core (which holds the scatter trace and every layout
// component: axes, colour bars, shapes, annotations, error bars, the mode bar) and the bar and
// heatmap traces. tests/test_board_bundle.py fails if a figure of the app needs another one.
"use strict";

var Plotly = require("plotly.js/lib/core");

Plotly.register([require("plotly.js/lib/bar"), require("plotly.js/lib/heatmap")]);

module.exports = Plotly;

"""``python -m attnviz.ui.board``: put the board's plotly.js in place and print which file it is."""

from attnviz.ui.board.assets import main

main()

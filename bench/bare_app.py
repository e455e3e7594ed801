"""The bare comparison page (bench/rerun.py, bench/browser_latency.py): the playground's
sidebar controls and engine, three plain heatmaps per head (bench/plain_charts.py).

    streamlit run bench/bare_app.py
"""

from bench.plain_charts import heatmaps, sidebar

heatmaps(*sidebar(), key="bare")

"""Plotly figure builders: pure functions of arrays, no Streamlit."""

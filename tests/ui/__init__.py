"""Tests of attnviz.ui, one file per module (see tests/test_layout.py)."""

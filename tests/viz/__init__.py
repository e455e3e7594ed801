"""Tests of attnviz.viz, one file per module (see tests/test_layout.py)."""

"""Tests of attnviz.models, one file per module (see tests/test_layout.py)."""

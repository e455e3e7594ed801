"""Tests of attnviz.web, one file per module (see tests/test_layout.py)."""

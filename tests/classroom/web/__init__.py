"""Tests of attnviz.classroom.web, one file per module (see tests/test_layout.py)."""

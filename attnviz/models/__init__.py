"""Pretrained models run through attnviz's own NumPy engine (see :mod:`attnviz.models.minilm`)."""

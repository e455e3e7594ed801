"""attnviz.ui.links: presets as links (only the values that differ from the defaults)."""

from attnviz import ui


def test_preset_query_leaves_defaults_out():
    q = ui.preset_query("udl-multihead")  # N=6, D=8, heads=2: the defaults
    assert q == {"source": "preset", "preset": "udl-multihead"}
    q = ui.preset_query("udl-self-attention")
    assert q["N"] == "3" and q["D"] == "4" and q["heads"] == "1" and q["scale"] == "none"

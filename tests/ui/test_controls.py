"""The table of sidebar controls (attnviz.ui.controls): one entry per control, and what is
made from it (DEFAULTS, KEYS, Settings) agrees with it."""

import dataclasses

import pytest

from attnviz import ui
from attnviz.teaching import presets
from attnviz.ui import controls, walker

CONTROLS = {c.key: c for c in ui.CONTROLS}


def test_keys_are_unique_and_the_url_keys_are_the_bound_controls():
    keys = [c.key for c in ui.CONTROLS]
    assert len(keys) == len(set(keys))
    assert set(ui.KEYS) == {c.key for c in ui.CONTROLS if c.bind}
    assert "upload" not in ui.KEYS  # a file cannot be put in a link


def test_settings_has_one_field_per_control_field_in_table_order():
    names = [f.name for f in dataclasses.fields(ui.Settings)]
    fields = [c.field for c in ui.CONTROLS if c.field]
    fields.insert(fields.index("mask_kind") + 1, "mask_params")  # the mask's parameters
    assert names == fields + ["upload_name"]


def test_settings_is_frozen_and_derives_the_engine_arguments():
    s = ui.Settings(**{c.field: c.default for c in ui.CONTROLS if c.field}, mask_params=())
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.n = 3
    assert s.scale is True and s.mask() is None and s.d_head == s.d // s.heads
    s2 = dataclasses.replace(s, scale_mode="custom", factor=2.5, mask_kind="causal")
    assert s2.scale == 2.5 and s2.mask().shape == (s.n, s.n)


@pytest.mark.parametrize("c", ui.CONTROLS, ids=lambda c: c.key)
def test_every_default_is_a_valid_value(c):
    values = dict(ui.DEFAULTS)
    if c.kind in ("radio", "select") and c.key != "preset":
        assert c.default in c.option_list(values), c.key
    if c.kind in ("slider", "number"):
        assert c.lo <= c.default <= c.hi, c.key
    if c.field:
        assert c.type is not None


@pytest.mark.parametrize("c", [c for c in ui.CONTROLS if c.bind], ids=lambda c: c.key)
def test_every_url_control_says_what_a_link_must_give(c):
    rule = c.rule_text(dict(ui.DEFAULTS))
    assert rule and not rule.endswith(".")


@pytest.mark.parametrize("c", ui.CONTROLS, ids=lambda c: c.key)
def test_named_checks_exist_and_conditions_name_earlier_controls(c):
    if c.after is not None:
        assert c.after in walker.AFTER
    order = [x.key for x in ui.CONTROLS]
    if c.when is not None:
        key, value = c.when
        assert order.index(key) < order.index(c.key)
        assert value in CONTROLS[key].option_list(dict(ui.DEFAULTS))
    for source in c.derived_by + c.disabled_by:
        assert source in ui.SOURCES


@pytest.mark.parametrize(
    ("d", "expected"),
    [(1, [1]), (7, [1, 7]), (8, [1, 2, 4, 8]), (12, [1, 2, 3, 4, 6, 12])],
)
def test_heads_options_follow_d(d, expected):
    assert CONTROLS["heads"].option_list({"D": d}) == expected
    assert f"D={d}" in CONTROLS["heads"].rule_text({"D": d})


def test_preset_source_is_offered_only_with_presets():
    assert "preset" in controls.sources({}) and presets.names()


def test_hidden_controls_take_their_hidden_value():
    assert CONTROLS["preset"].hidden_value() is None
    assert CONTROLS["factor"].hidden_value() == ui.DEFAULTS["factor"]
    assert CONTROLS["text"].shown({"source": "text"})
    assert not CONTROLS["text"].shown({"source": "random"})

"""``Settings`` is written out (a reader and an IDE see every field), and agrees with the
controls' table: one field per control with a ``field``, in table order, of its type; the
mask's parameters (``pad``, ...: controls made from ``attnviz.engine.masks``) sit in one field,
``mask_params``, after ``mask_kind``."""

import dataclasses
import pickle
import typing

from attnviz.ui import controls
from attnviz.ui.controls import CONTROLS, Settings


def test_settings_fields_are_the_tables_fields_in_order_with_their_types():
    hints = typing.get_type_hints(Settings)
    fields = [f.name for f in dataclasses.fields(Settings)]
    table = [(c.field, c.type) for c in CONTROLS if c.field]
    names = [name for name, _ in table]
    names.insert(names.index("mask_kind") + 1, "mask_params")
    assert fields == names + ["upload_name"]
    assert hints["mask_params"] == tuple[tuple[str, int], ...]
    for name, kind in table:
        assert hints[name] == kind, f"Settings.{name} is {hints[name]}, the table says {kind}"
    assert hints["upload_name"] == str | None


def test_settings_is_a_plain_module_level_class():
    # a class of controls.py's own (not made at run time): pickling finds it by name
    assert Settings.__module__ == controls.__name__ == "attnviz.ui.controls"
    assert getattr(controls, Settings.__qualname__) is Settings
    s = Settings(**{c.field: c.default for c in CONTROLS if c.field}, mask_params=())
    assert pickle.loads(pickle.dumps(s)) == s and hash(s) == hash(pickle.loads(pickle.dumps(s)))
    assert s.upload_name is None

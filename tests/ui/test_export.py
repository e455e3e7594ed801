"""attnviz.ui.export's pure parts: a matrix as displayed (the column layout transposes), CSV
with labels when they fit, the NPZ of the whole state read back, the digest."""

from __future__ import annotations

import io
import json

import numpy as np

from attnviz import ui
from attnviz.ui import export


def _view() -> ui.View:
    s = ui.Settings(**{c.field: c.default for c in ui.CONTROLS if c.field}, mask_params=())
    x, labels, params, res = ui.compute(s)
    return ui.View(s, x, labels, params, res)


def test_oriented_transposes_for_columns_only():
    a = np.arange(6.0).reshape(2, 3)
    assert export.oriented(a, "rows") is a
    np.testing.assert_array_equal(export.oriented(a, "columns"), a.T)
    np.testing.assert_array_equal(export.oriented(np.zeros((4, 2, 3)), "columns").shape, (4, 3, 2))


def test_csv_has_labels_when_they_fit_and_reads_back():
    a = np.array([[0.125, 1e-9], [2.0, -3.5]])
    text = export.csv_maker(a, ["q0", "q1"], ["k0", "k1"])().decode()
    assert text.splitlines()[0] == ",k0,k1" and text.splitlines()[1].startswith("q0,")
    back = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, usecols=(1, 2))
    np.testing.assert_allclose(back, a, rtol=1e-8)
    plain = export.csv_maker(a, ["only one"], None)().decode()  # labels that do not fit: numbers
    assert plain.splitlines()[:2] == [",0,1", "0,0.125,1e-09"]


def test_npz_holds_the_view_and_its_settings():
    v = _view()
    with np.load(io.BytesIO(export.npz_bytes(v, {"extra": np.ones(2)}))) as z:
        np.testing.assert_array_equal(z["weights"], v.result.weights)
        np.testing.assert_array_equal(z["w_q"], v.params.w_q)
        assert tuple(z["labels"]) == v.labels and z["extra"].tolist() == [1.0, 1.0]
        assert json.loads(str(z["settings_json"])) == v.settings.as_dict()


def test_digest_tells_arrays_apart():
    a = np.arange(4.0)
    assert export.digest(a) == export.digest(a.copy()) and len(export.digest(a)) == 12
    assert export.digest(a) != export.digest(a + 1e-12)

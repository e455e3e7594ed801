"""attnviz.ui.sizes: the sizes' rules (the divisors of D, the nearest one, the default heads)."""

from attnviz import ui


def test_divisors_and_nearest():
    assert ui.divisors(12) == [1, 2, 3, 4, 6, 12]
    assert ui.divisors(7) == [1, 7]
    assert ui.nearest_divisor(6, 4) == 3
    assert ui.nearest_divisor(10, 4) == 5 or ui.nearest_divisor(10, 4) == 2
    assert ui.nearest_divisor(10, 4) == 5  # |5-4| = 1 < |2-4| = 2
    assert ui.nearest_divisor(8, 3) == 2  # tie 2/4: the smaller
    for d in range(1, 40):
        assert d % ui.default_heads(d) == 0

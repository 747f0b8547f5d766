"""mean ± std over seeds, SEM, percentile bootstrap and Wilson intervals against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from vlcomp.metrics.stats import binomial_ci, bootstrap_ci, mean_std, sem


def test_mean_std_uses_sample_std() -> None:
    mean, std = mean_std([0.5, 0.6, 0.7])
    assert mean == pytest.approx(0.6)
    assert std == pytest.approx(0.1)  # sqrt((0.01 + 0 + 0.01) / (3 - 1)); ddof=0 would give 0.0816
    assert mean_std(np.array([1.0, 3.0])) == pytest.approx((2.0, math.sqrt(2.0)))


def test_single_value_has_zero_spread() -> None:
    assert mean_std([0.301]) == (0.301, 0.0)
    assert sem([0.301]) == 0.0


def test_sem_hand_value() -> None:
    assert sem([0.5, 0.6, 0.7]) == pytest.approx(0.1 / math.sqrt(3))


@pytest.mark.parametrize("values", [[], [[1.0, 2.0]], [1.0, float("nan")]])
def test_mean_std_rejects_bad_values(values: list) -> None:
    with pytest.raises(ValueError, match="values"):
        mean_std(values)


# Wilson score 95% intervals from Newcombe (1998), Stat. Med. 17:857-872, Table I (method 3), and 8/10.
@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        (8, 10, 0.4902, 0.9433),
    ],
)
def test_wilson_matches_published_values(k: int, n: int, low: float, high: float) -> None:
    got = binomial_ci(k, n)
    assert got == pytest.approx((low, high), abs=5e-5)


def test_wilson_hand_formula_and_edges() -> None:
    z = 1.6448536269514722  # 90% two-sided
    p, n = 0.5, 2
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert binomial_ci(1, 2, level=0.90) == pytest.approx((centre - half, centre + half))
    assert binomial_ci(10, 10)[1] == 1.0 and binomial_ci(0, 10)[0] == 0.0
    for bad in [(-1, 10), (11, 10), (1, 0), (1.5, 10)]:
        with pytest.raises(ValueError):
            binomial_ci(*bad)
    with pytest.raises(ValueError, match="level"):
        binomial_ci(1, 2, level=1.0)


def test_bootstrap_constant_data_is_a_point() -> None:
    assert bootstrap_ci(np.ones(50), 100, np.random.default_rng(0)) == (1.0, 1.0)
    assert bootstrap_ci(np.zeros(50, dtype=bool), 100, np.random.default_rng(0)) == (0.0, 0.0)


def test_bootstrap_is_deterministic_and_injected() -> None:
    x = (np.arange(400) % 3 == 0).astype(float)
    a = bootstrap_ci(x, 500, np.random.default_rng(42))
    b = bootstrap_ci(x, 500, np.random.default_rng(42))
    c = bootstrap_ci(x, 500, np.random.default_rng(43))
    assert a == b and a != c
    # identical to scipy's percentile bootstrap with the same generator state
    ref = sps.bootstrap((x,), np.mean, n_resamples=500, method="percentile", rng=np.random.default_rng(42))
    assert a == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))


def test_bootstrap_close_to_normal_approximation() -> None:
    n, p = 2000, 0.7
    x = np.arange(n) < p * n  # 1400 correct
    low, high = bootstrap_ci(x, 2000, np.random.default_rng(0))
    half = 1.959963984540054 * math.sqrt(p * (1 - p) / n)  # 0.0201
    assert low == pytest.approx(p - half, abs=3e-3)
    assert high == pytest.approx(p + half, abs=3e-3)
    narrow = bootstrap_ci(x, 2000, np.random.default_rng(0), level=0.5)
    assert low < narrow[0] < p < narrow[1] < high


def test_bootstrap_rejects_bad_args() -> None:
    x = np.array([0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="rng"):
        bootstrap_ci(x, 10, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap_ci(x, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(x, 10, np.random.default_rng(0), level=0.0)
    with pytest.raises(ValueError, match="per_item_correct"):
        bootstrap_ci(np.array([1.0]), 10, np.random.default_rng(0))


def test_variance_components_by_hand():
    from vlcomp.metrics.stats import design_variance, variance_components

    # bases (1, 3) and (5, 7): base means 2 and 6, grand mean 4
    # MS_within = ((1-2)^2 + (3-2)^2 + (5-6)^2 + (7-6)^2) / (2 * 1) = 2
    # MS_between = 2 * ((2-4)^2 + (6-4)^2) / 1 = 16 -> sigma2_base = (16 - 2) / 2 = 7
    assert variance_components([[1, 3], [5, 7]]) == (7.0, 2.0)
    # no base effect beyond noise: truncated at zero
    assert variance_components([[1, 3], [3, 1]]) == (0.0, 2.0)
    assert design_variance(7.0, 2.0, 3, 1) == 7 / 3 + 2 / 3
    assert design_variance(7.0, 2.0, 2, 2) == 7 / 2 + 2 / 4


def test_variance_components_match_a_naive_loop(rng):
    from vlcomp.metrics.stats import variance_components

    table = rng.normal(size=(4, 3)) + rng.normal(size=(4, 1)) * 2
    b, s = table.shape
    means = [sum(row) / s for row in table]
    grand = sum(means) / b
    within = sum((y - means[i]) ** 2 for i, row in enumerate(table) for y in row) / (b * (s - 1))
    between = s * sum((m - grand) ** 2 for m in means) / (b - 1)
    got = variance_components(table)
    assert np.isclose(got[1], within) and np.isclose(got[0], max(0.0, (between - within) / s))


@pytest.mark.parametrize("bad", [[[1, 2]], [[1], [2]], [[1, float("nan")], [2, 3]]])
def test_variance_components_refuses_a_table_it_cannot_split(bad):
    from vlcomp.metrics.stats import variance_components

    with pytest.raises(ValueError, match="variance_components"):
        variance_components(bad)

"""Uncertainty summaries: mean ± std over seeds, SEM, bootstrap and Wilson intervals for accuracies.

Conventions:

- "± std over seeds" (ARO Tables 3-5) is the **sample** standard deviation (``ddof=1``). With a single
  value it is reported as ``0.0`` (a deterministic run such as "No Shuffling"), never ``nan``.
- ``sem`` = sample std / sqrt(n) (also ``0.0`` for one value). The ARO text says "standard error bars" while
  the table captions say "standard deviations"; report the one you mean by name.
- Confidence intervals for an accuracy over items: percentile bootstrap of the mean of the per-item 0/1
  results (:func:`bootstrap_ci`, randomness injected) or the closed-form Wilson score interval
  (:func:`binomial_ci`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

# Keep bootstrap scratch memory bounded: at most this many resampled values are materialised at once.
_BOOTSTRAP_MAX_ELEMS = 1 << 22


def _as_1d_float(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    return arr


def mean_std(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """``(mean, sample std with ddof=1)`` of per-seed values; std is ``0.0`` when there is one value."""
    arr = _as_1d_float(values, "values")
    std = float(arr.std(ddof=1)) if arr.size > 1 else 0.0
    return float(arr.mean()), std


def sem(values: Sequence[float] | np.ndarray) -> float:
    """Standard error of the mean: ``std(ddof=1) / sqrt(n)``; ``0.0`` when there is one value."""
    arr = _as_1d_float(values, "values")
    return mean_std(arr)[1] / math.sqrt(arr.size)


def bootstrap_ci(
    per_item_correct: Sequence[float] | np.ndarray,
    n_boot: int,
    rng: np.random.Generator,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval of the mean of per-item results (e.g. 0/1 correctness).

    Definition: resample the ``N`` items with replacement ``n_boot`` times, take the mean of each resample,
    and return the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of those means
    (``scipy.stats.bootstrap(method="percentile")``). Randomness comes only from ``rng``.
    """
    arr = _as_1d_float(per_item_correct, "per_item_correct")
    if arr.size < 2:
        raise ValueError(f"per_item_correct needs at least 2 items for a bootstrap, got {arr.size}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    if int(n_boot) < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    _check_level(level)
    if np.all(arr == arr[0]):  # every resample has the same mean; scipy would warn about degeneracy
        return float(arr[0]), float(arr[0])
    batch = max(1, min(int(n_boot), _BOOTSTRAP_MAX_ELEMS // arr.size))
    from scipy import stats as sps  # imported here: scipy.stats costs seconds at import

    res = sps.bootstrap(
        (arr,),
        np.mean,
        n_resamples=int(n_boot),
        batch=batch,
        vectorized=True,
        confidence_level=level,
        method="percentile",
        rng=rng,
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def binomial_ci(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``successes / n``.

    Definition, with ``p = successes / n`` and ``z`` the ``(1 + level) / 2`` normal quantile::

        centre = (p + z^2 / (2n)) / (1 + z^2 / n)
        half   = z * sqrt(p (1 - p) / n + z^2 / (4 n^2)) / (1 + z^2 / n)

    Returns ``(centre - half, centre + half)`` clipped to ``[0, 1]``.
    """
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive int, got {n}")
    if int(successes) != successes or not 0 <= successes <= n:
        raise ValueError(f"successes must be an int in [0, n={n}], got {successes}")
    _check_level(level)
    from scipy import stats as sps

    z = float(sps.norm.ppf(0.5 + level / 2))
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact bounds at 0 and n (no rounding residue)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def variance_components(values: Sequence[Sequence[float]] | np.ndarray) -> tuple[float, float]:
    """``(sigma2_base, sigma2_finetune)`` of a balanced nested design: ``values[b][s]`` is one run on base seed ``b``
    with fine-tuning seed ``s`` (one-way random-effects ANOVA, method of moments):

    - ``MS_within = sum_b sum_s (y_bs - mean_b)^2 / (B (S - 1))`` estimates ``sigma2_finetune``;
    - ``MS_between = S sum_b (mean_b - mean)^2 / (B - 1)`` estimates ``sigma2_finetune + S sigma2_base``, so
      ``sigma2_base = max(0, (MS_between - MS_within) / S)`` (truncated at 0, as is usual).

    Needs ``B >= 2`` and ``S >= 2``."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 2:
        raise ValueError(f"variance_components needs a [bases >= 2, seeds >= 2] table, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError("variance_components: the table contains NaN")
    b, s = arr.shape
    per_base = arr.mean(axis=1)
    ms_within = float(((arr - per_base[:, None]) ** 2).sum() / (b * (s - 1)))
    ms_between = float(s * ((per_base - arr.mean()) ** 2).sum() / (b - 1))
    return max(0.0, (ms_between - ms_within) / s), ms_within


def design_variance(sigma2_base: float, sigma2_finetune: float, n_bases: int, n_seeds: int) -> float:
    """The variance of a method's mean over ``n_bases`` chains x ``n_seeds`` fine-tuning seeds each:
    ``sigma2_base / n_bases + sigma2_finetune / (n_bases n_seeds)``."""
    if n_bases < 1 or n_seeds < 1:
        raise ValueError(f"design_variance: n_bases={n_bases}, n_seeds={n_seeds} must be >= 1")
    return sigma2_base / n_bases + sigma2_finetune / (n_bases * n_seeds)

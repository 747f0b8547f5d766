"""Batched engine vs the one-item-at-a-time loop: which per-item rows are float near ties (tests and perf share it)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def near_tie_rows(df: pd.DataFrame, atol: float) -> np.ndarray:
    """Rows where two of the table's score columns (``score_*``, ``s_*``) lie within ``2 * atol`` of each other:
    a decision there depends on float rounding (batch composition, SIMD width), not on the model."""
    cols = [c for c in df.columns if (c.startswith("score_") or c.startswith("s_")) and df[c].dtype.kind == "f"]
    near = np.zeros(len(df), dtype=bool)
    for i, a in enumerate(cols):
        for b in cols[i + 1:]:
            near |= np.abs(df[a].to_numpy() - df[b].to_numpy()) <= 2 * atol
    return near

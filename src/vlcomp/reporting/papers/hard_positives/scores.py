"""What the report reads from the REPLACE / SWAP per-item tables (``metrics/<model>/items/{replace,swap}.parquet``,
:mod:`vlcomp.benchmarks.hardpos`): the raw scores behind Tables 2 and 9, the tie counts, the item-level definition
of every ``hardpos/...`` key the claims ledger compares (its bootstrap SEs and the power rule), and the items
Figures 1 and 3 show.

Per item: ``s_c``, ``s_n``, ``s_p`` (raw cosines, no logit scale), ``s_n_swapped`` (``c_n`` scored in the
``swapped_data/`` pass; equal to ``s_n`` for the batched engine) and the outcome masks ``orig``, ``aug``,
``brittle`` (strict inequalities: a tie fails). Parts: ``replace_att`` / ``replace_rel`` (table ``replace``) and
``swap``; ``replace`` pools the two (a plain mean over its items is the paper's instance-weighted pooling).

Derived per-model metrics (:func:`item_metrics`, added to the collected table by :func:`with_item_metrics`, so
their spread over chains is computed like any other metric's):

- ``hardpos/<part>/mean_s_c``, ``mean_s_n``, ``mean_s_p``: the mean over the part's items;
- ``hardpos/<part>/ties``: items with ``s_c == s_n`` or ``s_p == s_n_swapped`` (a tie with the negative: the
  comparisons Orig and Aug make), ``ties_c`` / ``ties_p`` each alone;
- ``hardpos/<part>/c_minus_p``, ``abs_c_minus_p``, ``c_minus_n``, ``p_above_c``: where the hard positive sits
  (:func:`positive_gaps`), the probe behind claim (b).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ...items import ItemScores
from ...ledger import Evidence

PARTS = ("replace", "replace_att", "replace_rel", "swap")
REPLACE_PARTS = ("replace_att", "replace_rel")
TABLES = ("replace", "swap")
SCORE_COLUMNS = ("part", "index", "caption", "positive", "negative", "s_c", "s_n", "s_n_swapped", "s_p", "orig",
                 "aug", "brittle")
SCORE_MEASURES = ("mean_s_c", "mean_s_n", "mean_s_p")
TIE_MEASURES = ("ties", "ties_c", "ties_p")
#: A ``hardpos/<part>/<measure>`` key -> its per-item score (a column, or Aug - Orig).
ITEM_SCORE = {"orig": "orig", "aug": "aug", "brittleness": "brittle", "mean_s_c": "s_c", "mean_s_n": "s_n",
              "mean_s_p": "s_p"}


def table_of(part: str) -> str:
    """The item table of a part: ``swap``, else ``replace``."""
    if part not in PARTS:
        raise ValueError(f"unknown Hard Positives part {part!r}; known: {', '.join(PARTS)}")
    return "swap" if part == "swap" else "replace"


def items_path(metrics_dir: str | Path, model: str, table: str) -> Path:
    return Path(metrics_dir) / model / "items" / f"{table}.parquet"


def read_items(metrics_dir: str | Path, model: str, table: str) -> pd.DataFrame | None:
    """A model's REPLACE or SWAP item table (:data:`SCORE_COLUMNS`), sorted by (part, index); None when it was
    not written. ValueError when a column is missing."""
    path = items_path(metrics_dir, model, table)
    if not path.exists():
        return None
    df = pd.read_parquet(path)
    missing = [c for c in SCORE_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: lacks columns {missing}")
    keep = [c for c in df.columns if c in (*SCORE_COLUMNS, "image_path", "image_id", "bbox_x", "bbox_y", "bbox_w",
                                           "bbox_h")]
    return df[keep].sort_values(["part", "index"], kind="stable").reset_index(drop=True)


def part_rows(df: pd.DataFrame, part: str) -> pd.DataFrame:
    """The rows of ``part`` (``replace``: both REPLACE parts)."""
    return df if part == "replace" else df[df["part"].astype(str) == part]


def ties(df: pd.DataFrame) -> dict[str, int]:
    """Tie counts of item rows: ``ties_c`` (s_c == s_n), ``ties_p`` (s_p == s_n_swapped) and ``ties`` (either)."""
    c = df["s_c"].to_numpy() == df["s_n"].to_numpy()
    p = df["s_p"].to_numpy() == df["s_n_swapped"].to_numpy()
    return {"ties": int((c | p).sum()), "ties_c": int(c.sum()), "ties_p": int(p.sum())}


def item_metrics(df: pd.DataFrame, table: str) -> dict[str, float]:
    """``hardpos/<part>/<measure>`` of one item table for :data:`SCORE_MEASURES`, :data:`TIE_MEASURES` and
    :data:`GAP_MEASURES`, per part it holds (and ``replace`` pooled when both REPLACE parts are there)."""
    parts = ["swap"] if table == "swap" else [p for p in REPLACE_PARTS if (df["part"] == p).any()]
    if table == "replace" and len(parts) == len(REPLACE_PARTS):
        parts.append("replace")
    out: dict[str, float] = {}
    for part in parts:
        rows = part_rows(df, part)
        if rows.empty:
            continue
        for measure in SCORE_MEASURES:
            out[f"hardpos/{part}/{measure}"] = float(rows[ITEM_SCORE[measure]].astype(np.float64).mean())
        out |= {f"hardpos/{part}/{k}": float(v) for k, v in ties(rows).items()}
        out |= {f"hardpos/{part}/{k}": v for k, v in positive_gaps(rows).items()}
    return out


#: Where the hard positive sits, per item (:func:`positive_gaps`): the probe behind claim (b).
GAP_MEASURES = ("c_minus_p", "abs_c_minus_p", "c_minus_n", "p_above_c")


def positive_gaps(df: pd.DataFrame) -> dict[str, float]:
    """Means over an item table's rows (all its parts: REPLACE pools Attributes and Relations, as Table 2 does) of
    s(c) - s(c_p), |s(c) - s(c_p)|, s(c) - s(c_n), and the share of items whose positive outscores the original
    (s(c_p) > s(c)). The paper's account of brittleness is that hard-negative training pushes meaning-preserving
    rewrites down with the negatives: s(c) - s(c_p) grows and c_p falls below c_n. These say whether it did."""
    c, p, n = (df[k].to_numpy(dtype=np.float64) for k in ("s_c", "s_p", "s_n"))
    if not len(c):
        return dict.fromkeys(GAP_MEASURES, math.nan)
    return {"c_minus_p": float(np.mean(c - p)), "abs_c_minus_p": float(np.mean(np.abs(c - p))),
            "c_minus_n": float(np.mean(c - n)), "p_above_c": float(np.mean(p > c))}


def with_item_metrics(long: pd.DataFrame, metrics_dir: str | Path) -> pd.DataFrame:
    """``long`` plus :func:`item_metrics` of every model that has a REPLACE or SWAP item table (a model without
    one gets none: its Tables 2 / 9 cells read *not measured*)."""
    if long.empty:
        return long
    rows = []
    for model, g in long.groupby("model", sort=False):
        keys = set(g["key"])
        first = g.iloc[0].to_dict()
        for table in TABLES:
            if f"hardpos/{table}/orig" not in keys:
                continue
            df = read_items(metrics_dir, str(model), table)
            if df is None:
                continue
            rows += [{**first, "key": k, "value": v} for k, v in item_metrics(df, table).items() if k not in keys]
    if not rows:
        return long
    return pd.concat([long, pd.DataFrame(rows, columns=long.columns)], ignore_index=True)


# --------------------------------------------------------------------------- item-level definitions (the ledger)


def item_key(key: str) -> tuple[str, str] | None:
    """(part, measure) of a ``hardpos/<part>/<measure>`` key whose metric is the mean of a per-item score (Orig,
    Aug, Brittleness, Aug - Orig, the mean raw scores); None for any other key (the tie counts are sums)."""
    parts = key.split("/")
    if len(parts) != 3 or parts[0] != "hardpos" or parts[1] not in PARTS:
        return None
    if parts[2] not in ITEM_SCORE and parts[2] != "delta":
        return None
    return parts[1], parts[2]


def item_scores(folder: str | Path, key: str, table: pd.DataFrame | None = None) -> ItemScores | None:
    """The per-item scores of a key of :func:`item_key`, items named by (part, index); None for any other key.
    ``table``: the model's item table when already read. FileNotFoundError when the table is missing."""
    got = item_key(key)
    if got is None:
        return None
    part, measure = got
    if table is None:
        path = Path(folder) / "items" / f"{table_of(part)}.parquet"
        if not path.exists():
            raise FileNotFoundError(f"{path}: no per-item table")
        table = pd.read_parquet(path)
    df = part_rows(table, part).sort_values(["part", "index"], kind="stable")
    path = Path(folder) / "items" / f"{table_of(part)}.parquet"
    if df.empty:
        raise ValueError(f"{path}: no {part} item")
    if measure == "delta":
        scores = df["aug"].astype(np.float64).to_numpy() - df["orig"].astype(np.float64).to_numpy()
    else:
        scores = df[ITEM_SCORE[measure]].astype(np.float64).to_numpy()
    index = pd.MultiIndex.from_arrays([df["part"].astype(str), df["index"].astype(int)], names=["part", "index"])
    return ItemScores(index, scores, None, 0)


class HardPosEvidence(Evidence):
    """:class:`vlcomp.reporting.ledger.Evidence` that also knows the per-item definition of the ``hardpos/...``
    keys (:func:`item_scores`); every other key as the ledger's. The per-item scores are checked to give the
    model's value, as the ledger checks its own."""

    def item_scores(self, model: str, key: str) -> ItemScores:
        got = item_key(key)
        if (model, key) not in self._scores and self.metrics_dir is not None and got is not None:
            folder = self.metrics_dir / model
            table = table_of(got[0])
            if (model, table) not in self._tables:  # one read per model and table
                path = folder / "items" / f"{table}.parquet"
                if not path.exists():
                    raise FileNotFoundError(f"{path}: no per-item table")
                self._tables[(model, table)] = pd.read_parquet(path)
            scores = item_scores(folder, key, self._tables[(model, table)])
            if scores is not None:
                self._check(model, key, float(np.mean(scores.scores)), folder)
                self._scores[(model, key)] = scores
        return super().item_scores(model, key)


# --------------------------------------------------------------------------- the figures' items


@dataclass(frozen=True)
class Pattern:
    """A score pattern over three models' item rows (CLIP, the hard-negative model, HP+HN), with its statement."""

    name: str
    text: str


def _pattern_masks(a: pd.DataFrame, b: pd.DataFrame, c: pd.DataFrame) -> dict[str, np.ndarray]:
    """The figures' patterns on aligned rows: ``clip_fails`` (CLIP s(c_n) > s(c)), ``clip_correct`` (CLIP's Aug
    holds), ``hn_brittle`` (the hard-negative model's s(c) > s(c_n) > s(c_p)), ``ours_correct`` (HP+HN's Aug)."""
    return {"clip_fails": a["s_n"].to_numpy() > a["s_c"].to_numpy(),
            "clip_correct": a["aug"].astype(bool).to_numpy(),
            "hn_brittle": ((b["s_c"].to_numpy() > b["s_n_swapped"].to_numpy())
                           & (b["s_n_swapped"].to_numpy() > b["s_p"].to_numpy())),
            "ours_correct": c["aug"].astype(bool).to_numpy()}


#: The patterns (catalog §4 Figures 1 and 3): the teaser's and Figure 3's top row (hard negatives alone give an
#: incomplete picture), and Figure 3's bottom row (hard-negative fine-tuning breaks CLIP's correct ranking).
TOP = Pattern("top", "CLIP s(c_n) > s(c); the hard-negative model s(c) > s(c_n) > s(c_p); HP+HN s(c) > s(c_n) and "
                     "s(c_p) > s(c_n)")
BOTTOM = Pattern("bottom", "CLIP s(c) > s(c_n) and s(c_p) > s(c_n); the hard-negative model s(c) > s(c_n) > s(c_p); "
                           "HP+HN s(c) > s(c_n) and s(c_p) > s(c_n)")


def aligned(tables: Sequence[pd.DataFrame]) -> list[pd.DataFrame]:
    """The models' item tables on their common (part, index) items, in that order; ValueError when the same item
    has other captions in two tables."""
    keys = [set(zip(t["part"], t["index"], strict=True)) for t in tables]
    common = sorted(set.intersection(*keys)) if keys else []
    out = []
    for t in tables:
        t = t.set_index(["part", "index"]).loc[common].reset_index()
        out.append(t)
    for t in out[1:]:
        same = (t[["caption", "positive", "negative"]].to_numpy() == out[0][["caption", "positive", "negative"]]
                .to_numpy()).all()
        if not same:
            raise ValueError("the models' item tables hold different captions for the same items")
    return out


def matches(tables: Sequence[pd.DataFrame], pattern: Pattern) -> pd.DataFrame:
    """The (part, index) items of three aligned tables (CLIP, hard-negative model, HP+HN) that show ``pattern``, in
    item order."""
    a, b, c = aligned(tables)
    m = _pattern_masks(a, b, c)
    mask = (m["clip_fails"] if pattern is TOP else m["clip_correct"]) & m["hn_brittle"] & m["ours_correct"]
    return a.loc[mask, ["part", "index"]].reset_index(drop=True)


#: The F1 / F3 slots: (artifact, position, item table, parts searched in order, pattern, which match).
SLOTS: tuple[tuple[str, str, str, tuple[str, ...], Pattern, int], ...] = (
    ("HP-F1", "teaser", "replace", ("replace_att", "replace_rel"), TOP, 0),
    ("HP-F3", "top-left", "replace", ("replace_att", "replace_rel"), TOP, 1),
    ("HP-F3", "top-right", "swap", ("swap",), TOP, 0),
    ("HP-F3", "bottom-left", "replace", ("replace_att", "replace_rel"), BOTTOM, 0),
    ("HP-F3", "bottom-right", "swap", ("swap",), BOTTOM, 0),
)
SELECTION_RULE = ("On chain b0 (CLIP `clip-b0`, the hard-negative model's and HP+HN's `b0s0` runs), the items are "
                  "taken in order (REPLACE: Attributes before Relations, as the paper's examples are Attributes; "
                  "then by index) and the first with the slot's pattern is shown (Figure 3's top-left, the teaser's "
                  "pattern again: the second). Top row / teaser: " + TOP.text + ". Bottom row: " + BOTTOM.text +
                  ". A comparison with s(c_n) uses the pass it belongs to (Orig: s_n; Aug and the brittle "
                  "order: s_n_swapped). A fixed rule on the metrics, not a choice by eye.")


def select(tables: Mapping[str, Sequence[pd.DataFrame]], slots=SLOTS) -> list[dict]:
    """Per slot, the chosen item ``{artifact, position, table, part, index, pattern}`` or with ``index`` None when
    no item has the pattern. ``tables``: per item table (``replace`` / ``swap``) the three models' tables (CLIP,
    hard-negative model, HP+HN)."""
    out = []
    for artifact, position, table, parts, pattern, nth in slots:
        chosen = None
        if table in tables:
            found = matches(tables[table], pattern)
            order = {p: i for i, p in enumerate(parts)}
            found = found[found["part"].isin(parts)]
            found = found.assign(_o=found["part"].map(order)).sort_values(["_o", "index"], kind="stable")
            if len(found) > nth:
                chosen = found.iloc[nth]
        out.append({"artifact": artifact, "position": position, "table": table,
                    "part": None if chosen is None else str(chosen["part"]),
                    "index": None if chosen is None else int(chosen["index"]), "pattern": pattern.text})
    return out


def score_rows(tables: Sequence[pd.DataFrame], labels: Sequence[str], part: str, index: int) -> pd.DataFrame:
    """One item's score table as the paper prints it: one row per caption (c, c_n, c_p with its text), one column
    per model (raw cosines; c_n's score is the Orig pass's, s_n)."""
    rows = []
    got = [t[(t["part"] == part) & (t["index"] == index)].iloc[0] for t in tables]
    first = got[0]
    for role, col, text in (("c", "s_c", first["caption"]), ("c_n", "s_n", first["negative"]),
                            ("c_p", "s_p", first["positive"])):
        rows.append({"caption": f"{role}: {text}", **{lab: float(r[col]) for lab, r in zip(labels, got, strict=True)}})
    return pd.DataFrame(rows)


def most_brittle(summ: pd.DataFrame, candidates: Iterable[str], key: str = "hardpos/replace/brittleness"
                 ) -> str | None:
    """The candidate with the highest mean over chains of ``key`` (ties: the first in ``candidates``' order); None
    when none has it."""
    best, best_v = None, -math.inf
    for m in candidates:
        row = summ[(summ["method"] == m) & (summ["key"] == key)]
        if len(row) and float(row["mean"].iloc[0]) > best_v:
            best, best_v = m, float(row["mean"].iloc[0])
    return best

"""TSVLC's supplementary-equivalent artifacts that show text, not scores: the word lists and generated
negatives (TSVLC-S2), the analogy prompt and positives (TSVLC-S3) and qualitative VL-CheckList successes and
failures (TSVLC-S4).

Everything is read from the stage outputs:
``data/mined/<generator>/{negatives,negative_types,positives,summary}.json`` (``mine@<generator>``; per
image, per caption, a list), the split's captions (:class:`vlcomp.world.Split`) and the per-item VL-CheckList
tables of the evaluate stages (``metrics/<model>/items/vlchecklist.parquet``, the layout
:mod:`vlcomp.reporting.items` reads). Examples are drawn deterministically: captions by a generator seeded
from ``root_seed`` (:func:`vlcomp.seeding.np_rng`), items by a fixed order (largest margin first, then file
and index). A missing input returns None, and the report says which file is missing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ....io import read_json
from ....seeding import np_rng

NEGATIVE_GENERATORS = ("tsvlc_rb", "tsvlc_unmask", "tsvlc_mix")
ANALOGY_GENERATOR = "tsvlc_analogy"
TOY_POSITIVES = ("toy: a scene-graph-exact paraphrase (vlcomp.text.analogy.SceneParaphrases), not LLM "
                 "output; correct by construction, which the paper's BLOOM positives are not")


def word_lists_table() -> pd.DataFrame:
    """The RB word lists: the paper's (the reference repo's, two data bugs fixed) and the toy world's, per
    type."""
    from ....text.tsvlc_rules import PAPER_WORD_LISTS, toy_word_lists

    toy = toy_word_lists()
    rows = []
    for kind in dict.fromkeys([*PAPER_WORD_LISTS, *toy]):
        paper, ours = PAPER_WORD_LISTS.get(kind, ()), toy.get(kind, ())
        rows.append({"type": kind, "paper: n": len(paper), "paper: words": ", ".join(paper),
                     "toy: n": len(ours), "toy: words": ", ".join(ours)})
    return pd.DataFrame(rows)


def _flat(nested: list[list]) -> list:
    return [x for per_image in nested for x in per_image]


def generator_dir(mined_root: str | Path, generator: str) -> Path:
    return Path(mined_root) / generator


def negative_examples(mined_root: str | Path, generator: str, captions: list[list[str]], seed: int,
                      n: int = 8) -> pd.DataFrame | None:
    """``n`` captions with a negative, drawn uniformly without replacement (seeded by ``seed`` and the
    generator), each with its first negative and its type; None when the generator's files are missing. Raises
    ValueError when the files do not match the split's captions."""
    folder = generator_dir(mined_root, generator)
    if not (folder / "negatives.json").exists():
        return None
    negs, types = read_json(folder / "negatives.json"), read_json(folder / "negative_types.json")
    if len(negs) != len(captions) or any(len(a) != len(b) for a, b in zip(negs, captions, strict=True)):
        raise ValueError(f"{folder / 'negatives.json'}: its images / captions do not match the split's")
    flat_caps, flat_negs, flat_types = _flat(captions), _flat(negs), _flat(types)
    have = [i for i, ns in enumerate(flat_negs) if ns]
    if not have:
        return pd.DataFrame(columns=["caption", "negative", "type", "negatives of this caption"])
    rng = np_rng(seed, "report", "tsvlc", "S2", generator)
    picked = sorted(rng.choice(len(have), size=min(n, len(have)), replace=False).tolist())
    return pd.DataFrame([{"caption": flat_caps[i], "negative": flat_negs[i][0], "type": flat_types[i][0],
                          "negatives of this caption": len(flat_negs[i])} for i in (have[k] for k in picked)])


def generator_summary(mined_root: str | Path,
                      generators: tuple[str, ...] = NEGATIVE_GENERATORS) -> pd.DataFrame:
    """Per generator, from its ``summary.json`` (keys ``mine/<name>/...``): captions, the share with a
    negative, the mean number of candidates and the share of each negative type; a generator without a summary
    is ``not run``."""
    rows = []
    for g in generators:
        path = generator_dir(mined_root, g) / "summary.json"
        if not path.exists():
            rows.append({"generator": g, "status": "not run"})
            continue
        s = read_json(path)
        p = f"mine/{g}/"
        n = s.get(f"{p}n_captions", np.nan)
        row = {"generator": g, "status": "", "captions": n,
               "share with a negative": s.get(f"{p}captions_with_negative", np.nan) / n if n else np.nan,
               "mean negatives per caption": s.get(f"{p}mean_negatives", np.nan)}
        row |= {f"type share: {k.removeprefix(p + 'share/')}": v for k, v in sorted(s.items())
                if k.startswith(f"{p}share/")}
        rows.append(row)
    return pd.DataFrame(rows)


def positive_examples(mined_root: str | Path, captions: list[list[str]], seed: int, n: int = 8
                      ) -> tuple[pd.DataFrame, dict] | None:
    """``n`` captions with a positive (seeded draw) and the generator's summary; None when not generated."""
    folder = generator_dir(mined_root, ANALOGY_GENERATOR)
    if not (folder / "positives.json").exists():
        return None
    pos = read_json(folder / "positives.json")
    if len(pos) != len(captions):
        raise ValueError(f"{folder / 'positives.json'}: {len(pos)} images, the split has {len(captions)}")
    flat_caps, flat_pos = _flat(captions), _flat(pos)
    have = [i for i, p in enumerate(flat_pos) if p]
    rng = np_rng(seed, "report", "tsvlc", "S3")
    picked = sorted(rng.choice(len(have), size=min(n, len(have)), replace=False).tolist()) if have else []
    df = pd.DataFrame([{"caption": flat_caps[i], "positive": flat_pos[i][0], "source": TOY_POSITIVES}
                       for i in (have[k] for k in picked)], columns=["caption", "positive", "source"])
    summary = read_json(folder / "summary.json") if (folder / "summary.json").exists() else {}
    return df, summary


# --------------------------------------------------------------------------- S4: qualitative items

ITEMS_TABLE = "vlchecklist"
ITEM_COLUMNS = ("file", "index", "pos", "neg", "score_pos", "score_neg", "correct")


def read_items(metrics_dir: str | Path, model: str) -> pd.DataFrame | None:
    """A model's per-item VL-CheckList table, or None when it was not written."""
    path = Path(metrics_dir) / model / "items" / f"{ITEMS_TABLE}.parquet"
    if not path.exists():
        return None
    df = pd.read_parquet(path)
    missing = [c for c in ITEM_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: lacks columns {missing}")
    return df[list(ITEM_COLUMNS)]


def discordant(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The items of two models' tables joined on (file, index), with each one's margin (score_pos - score_neg)
    and correctness. Raises ValueError when the two tables hold different items or captions."""
    m = a.merge(b, on=["file", "index"], suffixes=("_a", "_b"), how="outer", indicator=True)
    same = (m["pos_a"] == m["pos_b"]).all() and (m["neg_a"] == m["neg_b"]).all()
    if (m["_merge"] != "both").any() or not same:
        raise ValueError("the two models' VL-CheckList item tables hold different items")
    m = m.assign(margin_a=m["score_pos_a"] - m["score_neg_a"], margin_b=m["score_pos_b"] - m["score_neg_b"])
    return m.rename(columns={"pos_a": "positive", "neg_a": "negative"})[
        ["file", "index", "positive", "negative", "correct_a", "correct_b", "margin_a", "margin_b"]]


def outcome_counts(m: pd.DataFrame, label_a: str, label_b: str) -> pd.DataFrame:
    """Per file: items both get right, only ``a``, only ``b``, neither."""
    ca, cb = m["correct_a"].astype(bool), m["correct_b"].astype(bool)
    df = m.assign(both=ca & cb, only_a=ca & ~cb, only_b=~ca & cb, neither=~ca & ~cb)
    out = df.groupby("file", sort=True)[["both", "only_a", "only_b", "neither"]].sum().reset_index()
    out.loc[len(out)] = ["all files", *out[["both", "only_a", "only_b", "neither"]].sum().tolist()]
    return out.rename(columns={"both": "both right", "only_a": f"only {label_a} right",
                               "only_b": f"only {label_b} right", "neither": "both wrong"})


def examples(m: pd.DataFrame, a_right: bool, n: int = 8) -> pd.DataFrame:
    """Up to ``n`` items where ``a`` is right and ``b`` wrong (``a_right``) or the reverse: per file the item
    with the largest margin of the right model (ties: smaller index), then files in order, taking one per file
    in turn."""
    ca, cb = m["correct_a"].astype(bool), m["correct_b"].astype(bool)
    sel = m[ca & ~cb] if a_right else m[~ca & cb]
    margin = "margin_a" if a_right else "margin_b"
    sel = sel.sort_values(["file", margin, "index"], ascending=[True, False, True])
    sel = sel.assign(_rank=sel.groupby("file").cumcount()).sort_values(["_rank", "file"]).head(n)
    return sel.drop(columns="_rank").reset_index(drop=True)

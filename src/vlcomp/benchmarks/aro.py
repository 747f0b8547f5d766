"""ARO on the released files: VG-Relation, VG-Attribution (``visual_genome_*.json`` + the images folder) and
COCO-Order / Flickr30k-Order (built from the Karpathy test captions with the four ARO shuffles).

Per-item tables (one row per case, scores included) and the aggregates derived from them alone:

- ``vg_relation``: options ``[false, true]`` (reference order), correct iff ``score_true > score_false``
  (a tie is wrong, :data:`vlcomp.metrics.aro.VG_TIE_RULE`). Rows whose relation is in the exclusion list
  (the ARO notebook's 157 ``symmetric`` names, a file given as data) carry ``excluded=True`` and leave the
  macro. Keys ``aro/vg_relation/{macro_acc, micro_acc, spatial_macro_acc, verbs_macro_acc, n_relations,
  n_cases, n_excluded_cases, tie_rate}`` and ``aro/vg_relation/rel/<relation>/acc``; split by relation kind
  (:func:`vlcomp.metrics.aro.relation_kind`: ARO Table 2's geometric relations vs the role-asymmetric rest),
  ``aro/vg_relation/{geometric,role}_{macro_acc,wrong_image_macro_acc,n_cases}``.
- ``vg_attribution``: same rule; the macro over ordered attribute pairs with >= 25 cases
  (``aro_vga_min_count`` overrides it: the smoke twin is too small for 25). Keys
  ``aro/vg_attribution/{macro_acc, micro_acc, n_pairs, n_cases, tie_rate}``.
- Both VG tasks carry two diagnostics (both profiles): the **wrong-image control** (every case scored again
  against another case's crop, a seeded derangement ``np_rng(seed, "evaluate", "wrong_image", name)`` with
  ``seed`` = ``root_seed``: accuracy that survives the wrong image comes from a text-side prior, not from
  looking) and the **text-swap cosine** (cosine of the true caption and its swap under the text tower: 1 means no
  image can separate them). Keys ``aro/vg_*/wrong_image_macro_acc`` and ``aro/vg_*/text_swap_cosine``. The
  relation groups of Table 2 come from ``aro_relation_groups`` (a JSON file relation -> group; the toy twin
  writes its world's) or default to the ARO notebook's lists (:data:`vlcomp.metrics.aro.VG_RELATION_GROUP_OF`).
- ``coco_order`` / ``flickr_order``: one case per Karpathy caption and seed (the released code's convention),
  options ``[original, *ORDER_KINDS]`` from the **raw** caption, all through ``pre_caption(30)``; correct iff
  the original is not beaten (a tie is right, :data:`~vlcomp.metrics.aro.ORDER_TIE_RULE`). Keys
  ``aro/{coco,flickr30k}_order/{acc, acc_std, n_seeds, n_cases, tie_rate, unchanged_rate}`` where ``acc`` is
  the mean over seeds of the per-seed accuracy and ``acc_std`` its sample std (over perturbation seeds).
  The options are materialised once by the ``benchmarks`` stage (:mod:`vlcomp.benchmarks.materialise`:
  ``<name>_options`` = a folder of ``seed<s>.json``); without that input they are computed here with spaCy.
  An option identical to the original after ``pre_caption`` ties with it by definition (the engine gives
  identical captions of one item one score), so a perturbation that changed nothing counts right.

AMBIGUOUS (documented choices):

- Order seeds: the ARO text says 5 seeds, Table 5's caption and the reproducibility statement say 3; the default
  here is 3 (``order_seeds``, an int n -> seeds 0..n-1, or a list), the count of the table this task reproduces
  and the same as the retrieval perturbations (5 until session 13; 3 saves 40 % of the Order scoring in every
  evaluation). Seed ``s`` draws from ``np_rng(seed, "benchmarks", "order", <coco|flickr>,
  s)`` (``seed`` = ``root_seed``): reproducible per seed, not the reference's global-RNG draws.
- A VG box reaching outside its image stops the run naming the record (the loader's rule), whereas the
  reference's ``PIL.Image.crop`` would silently pad with black; ``aro_box_tolerance_px`` lets boxes overhang
  by that much (the released files were not available to check whether any do).
- Order captions are one case per caption (25,010 COCO / 5,000 Flickr), as the released code, not one per
  image as the paper's "6,000 test cases" suggests.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..eval.common import as_bool, as_text, checked, derangement, key_part, need_path, table
from ..eval.engine import ChoiceTask, first_by_key
from ..formats.aro import VGCase, load_exclusions, load_vg
from ..formats.karpathy import load_karpathy
from ..formats.records import RecordError, open_image, read_json_strict, where
from ..metrics.aro import (
    ORDER_CORRECT_INDEX,
    ORDER_TIE_RULE,
    VG_ATTRIBUTION_MIN_COUNT,
    VG_CORRECT_INDEX,
    VG_RELATION_GROUP_OF,
    VG_RELATION_MIN_COUNT,
    VG_TIE_RULE,
    group_macro,
    macro_accuracy,
    pick_correct,
    relation_kind,
)
from ..metrics.stats import mean_std
from ..seeding import np_rng
from ..text.perturb import ORDER_KINDS, TextShuffler
from .registry import Benchmark, register

#: Order option names, in the reference's option order (index 0 is the original caption).
ORDER_OPTIONS: tuple[str, ...] = ("original", *ORDER_KINDS)
DEFAULT_ORDER_SEEDS = 5
#: Metric prefix of each Order benchmark (Flickr keeps the toy profile's ``flickr30k`` spelling).
ORDER_METRIC_NAME = {"coco_order": "coco_order", "flickr_order": "flickr30k_order"}


# --------------------------------------------------------------------------- VG-Relation / VG-Attribution


def vg_task(cases: Sequence[VGCase], images_dir: str | Path, source: str | Path, kind: str, *,
            exclusions: Iterable[str] = frozenset(), tolerance_px: float = 0.0, seed: int = 0,
            groups: Mapping[str, str] | None = None) -> ChoiceTask:
    """A VG-R (``kind="relation"``) or VG-A (``"attribution"``) task over loaded cases. An image is a crop,
    keyed by (images folder, image path, box): cases sharing a crop encode it once. A box reaching more than
    ``tolerance_px`` outside its image is an error naming the record. With two or more cases the task carries
    the wrong-image control (a derangement drawn from ``seed``) and the text-swap cosine (module docstring)."""
    if kind not in ("relation", "attribution"):
        raise ValueError(f"kind must be 'relation' or 'attribution', got {kind!r}")
    name = f"vg_{kind}"
    images_dir, exclusions = Path(images_dir), frozenset(exclusions)
    groups = VG_RELATION_GROUP_OF if groups is None else groups
    keys = [(str(images_dir), c.image_path, c.box) for c in cases]
    first = first_by_key(keys, cases)
    meta = pd.DataFrame({
        "index": [c.index for c in cases],
        "image_path": [c.image_path for c in cases],
        "bbox_x": [c.box[0] for c in cases], "bbox_y": [c.box[1] for c in cases],
        "bbox_w": [c.box[2] for c in cases], "bbox_h": [c.box[3] for c in cases],
        "false_caption": [c.false_caption for c in cases], "true_caption": [c.true_caption for c in cases],
    })
    if kind == "relation":
        meta.insert(1, "relation", [c.group for c in cases])
        meta["excluded"] = [c.group in exclusions for c in cases]
        meta["relation_group"] = [groups.get(c.group, "") for c in cases]
    else:
        meta.insert(1, "pair", [c.group for c in cases])
    controls, pairs = {}, {}
    if len(cases) >= 2:
        wrong = derangement(len(cases), np_rng(seed, "evaluate", "wrong_image", name))
        meta["wrong_image"] = wrong
        controls = {"wrong_image": [keys[j] for j in wrong]}
        pairs = {"text_cosine": (0, 1)}
    return ChoiceTask(
        name=name, meta=meta, image_keys=keys, captions=[c.caption_options for c in cases],
        load_image=lambda key: first[key].crop(images_dir, source, tolerance_px=tolerance_px),
        finish=lambda m, s, extras=None: {name: finish_vg(m, s, extras)},
        image_file=lambda key: Path(key[0]) / key[1], controls=controls, text_pairs=pairs,
    )


def finish_vg(meta: pd.DataFrame, scores: np.ndarray, extras: Mapping[str, np.ndarray] | None = None) -> pd.DataFrame:
    """Scores ``[N, 2]`` in ``[false, true]`` order -> the per-case table (``correct`` by the VG tie rule); with
    ``extras`` also the wrong-image scores and decisions and the text-swap cosine."""
    df = meta.copy()
    df["score_false"], df["score_true"] = scores[:, 0].astype(np.float64), scores[:, 1].astype(np.float64)
    df["correct"] = pick_correct(scores, VG_CORRECT_INDEX, VG_TIE_RULE)
    df["tie"] = scores[:, 0] == scores[:, 1]
    if extras:
        w = extras["wrong_image"]
        df["wrong_score_false"], df["wrong_score_true"] = w[:, 0].astype(np.float64), w[:, 1].astype(np.float64)
        df["wrong_correct"] = pick_correct(w, VG_CORRECT_INDEX, VG_TIE_RULE)
        df["text_cosine"] = extras["text_cosine"]
    return df


def load_relation_groups(path: str | Path) -> dict[str, str]:
    """``aro_relation_groups``: a JSON object relation name -> group (``spatial`` / ``verbs``)."""
    data = read_json_strict(path)
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                              for k, v in data.items()):
        raise RecordError(f"{path}: expected a JSON object mapping relation names to group names")
    return data


def prepare_vg_relation(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``aro_vg_relation`` (JSON), ``aro_images`` (folder), ``aro_relation_exclusions`` (text file);
    optional ``aro_box_tolerance_px``."""
    path = need_path(inputs, "aro_vg_relation", "vg_relation")
    images = need_path(inputs, "aro_images", "vg_relation", directory=True)
    exclusions = load_exclusions(need_path(inputs, "aro_relation_exclusions", "vg_relation"))
    groups = (load_relation_groups(need_path(inputs, "aro_relation_groups", "vg_relation"))
              if inputs.get("aro_relation_groups") else None)
    return vg_task(load_vg(path, "relation"), images, path, "relation", exclusions=exclusions,
                   tolerance_px=float(inputs.get("aro_box_tolerance_px") or 0.0), seed=int(inputs.get("seed") or 0),
                   groups=groups)


def prepare_vg_attribution(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``aro_vg_attribution`` (JSON), ``aro_images`` (folder); optional ``aro_box_tolerance_px``."""
    path = need_path(inputs, "aro_vg_attribution", "vg_attribution")
    images = need_path(inputs, "aro_images", "vg_attribution", directory=True)
    return vg_task(load_vg(path, "attribution"), images, path, "attribution",
                   tolerance_px=float(inputs.get("aro_box_tolerance_px") or 0.0), seed=int(inputs.get("seed") or 0))


def aggregate_vg_relation(tables: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    df = table(tables, "vg_relation", ("relation", "correct", "excluded", "tie"))
    correct, excluded = as_bool(df["correct"]), as_bool(df["excluded"])
    relations = as_text(df["relation"])
    dropped = {r for r, e in zip(relations, excluded, strict=True) if e}
    try:
        macro, per = macro_accuracy(correct, relations, min_count=VG_RELATION_MIN_COUNT, exclude=dropped)
    except ValueError as e:
        raise ValueError(f"vg_relation: {e}") from None
    p = "aro/vg_relation"
    out = {f"{p}/macro_acc": macro, f"{p}/micro_acc": float(correct[~excluded].mean()),
           f"{p}/n_relations": len(per), f"{p}/n_cases": int((~excluded).sum()),
           f"{p}/n_excluded_cases": int(excluded.sum()), f"{p}/tie_rate": float(as_bool(df["tie"])[~excluded].mean())}
    group_of = {r: g for r, g in zip(relations, as_text(df["relation_group"]), strict=True) if g} \
        if "relation_group" in df.columns else VG_RELATION_GROUP_OF
    out |= {f"{p}/{g}_macro_acc": v for g, v in group_macro(per, group_of).items()}
    out |= {f"{p}/rel/{key_part(r.group)}/acc": r.accuracy for r in per.itertuples()}
    out |= _controls(df, relations, min_count=VG_RELATION_MIN_COUNT, exclude=dropped, keep=~excluded, prefix=p)
    out |= _kind_split(df, correct, relations, excluded, dropped, p)
    return checked(out)


def _kind_split(df: pd.DataFrame, correct: np.ndarray, relations: list[str], excluded: np.ndarray,
                dropped: set[str], prefix: str) -> dict[str, float]:
    """VG-R split by relation kind (:func:`relation_kind`): ``{geometric,role}_macro_acc``, their wrong-image
    controls and ``{kind}_n_cases`` — the two halves of ARO Table 2 (no NegCLIP gain expected on geometric
    relations, a gain on role-asymmetric ones)."""
    kinds = np.array([relation_kind(r) for r in relations])
    wrong = as_bool(df["wrong_correct"]) if "wrong_correct" in df.columns else None
    out: dict[str, float] = {}
    for kind in ("geometric", "role"):
        mask = (kinds == kind) & ~excluded
        if not mask.any():
            continue
        rel = [r for r, m in zip(relations, mask, strict=True) if m]
        out[f"{prefix}/{kind}_macro_acc"] = macro_accuracy(correct[mask], rel, min_count=VG_RELATION_MIN_COUNT,
                                                           exclude=dropped)[0]
        out[f"{prefix}/{kind}_n_cases"] = int(mask.sum())
        if wrong is not None:
            out[f"{prefix}/{kind}_wrong_image_macro_acc"] = macro_accuracy(
                wrong[mask], rel, min_count=VG_RELATION_MIN_COUNT, exclude=dropped)[0]
    return out


def _controls(df: pd.DataFrame, groups: list[str], *, min_count: int, exclude: set[str], keep: np.ndarray,
              prefix: str) -> dict[str, float]:
    """The wrong-image macro accuracy and the mean text-swap cosine, when the table has them."""
    if "wrong_correct" not in df.columns:
        return {}
    wrong, _ = macro_accuracy(as_bool(df["wrong_correct"]), groups, min_count=min_count, exclude=exclude)
    return {f"{prefix}/wrong_image_macro_acc": wrong,
            f"{prefix}/text_swap_cosine": float(df["text_cosine"].to_numpy(dtype=np.float64)[keep].mean())}


def aggregate_vg_attribution(tables: Mapping[str, pd.DataFrame], *,
                             min_count: int = VG_ATTRIBUTION_MIN_COUNT) -> dict[str, float]:
    df = table(tables, "vg_attribution", ("pair", "correct", "tie"))
    correct = as_bool(df["correct"])
    try:
        macro, per = macro_accuracy(correct, as_text(df["pair"]), min_count=min_count)
    except ValueError as e:  # e.g. no attribute pair with min_count cases
        raise ValueError(f"vg_attribution: {e}") from None
    p = "aro/vg_attribution"
    out = {f"{p}/macro_acc": macro, f"{p}/micro_acc": float(correct.mean()), f"{p}/n_pairs": len(per),
           f"{p}/n_cases": len(df), f"{p}/tie_rate": float(as_bool(df["tie"]).mean())}
    out |= _controls(df, as_text(df["pair"]), min_count=min_count, exclude=set(), keep=np.ones(len(df), bool), prefix=p)
    return checked(out)


# --------------------------------------------------------------------------- COCO-Order / Flickr30k-Order


def order_seeds(value: int | Sequence[int] | None) -> list[int]:
    """``order_seeds``: a count n (seeds 0..n-1) or an explicit list of distinct ints."""
    if value is None:
        return list(range(DEFAULT_ORDER_SEEDS))
    if isinstance(value, bool):
        raise ValueError(f"order_seeds must be a positive int or a list of ints, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ValueError(f"order_seeds must be >= 1, got {value}")
        return list(range(value))
    seeds = list(value)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds) or len(set(seeds)) != len(seeds):
        raise ValueError(f"order_seeds must be a non-empty list of distinct ints, got {value!r}")
    return seeds


#: Short name of each Order benchmark's dataset in seeding keys (the toy's historical ``coco`` / ``flickr``).
ORDER_SHORT = {"coco_order": "coco", "flickr_order": "flickr"}


def compute_order_options(records: Sequence[Mapping[str, Any]], name: str, seeds: Sequence[int], *,
                          shuffler: TextShuffler | None = None, base_seed: int = 0,
                          tagged: Sequence[Any] | None = None) -> dict[int, list[list[str]]]:
    """``{seed: [one options list per caption]}`` over **raw** Karpathy records (``load_karpathy(clean=False)``):
    option 0 the original, then the four ARO shuffles, all through ``pre_caption(30)``. The captions are tagged
    by spaCy once and perturbed once per seed (``np_rng(base_seed, "benchmarks", "order", <short>, seed)``)."""
    if name not in ORDER_METRIC_NAME:
        raise ValueError(f"order benchmark name must be one of {sorted(ORDER_METRIC_NAME)}, got {name!r}")
    shuffler = shuffler or TextShuffler()
    captions = [c for r in records for c in r["caption"]]
    tagged = shuffler.tag(captions) if tagged is None else tagged
    return {seed: shuffler.order_options(captions, np_rng(base_seed, "benchmarks", "order", ORDER_SHORT[name], seed),
                                         tagged=tagged)
            for seed in seeds}


def order_options_records(records: Sequence[Mapping[str, Any]], options: Sequence[Sequence[str]]) -> list[dict]:
    """One seed's options file: ``[{"image", "caption_options"}]``, one entry per caption in record order."""
    images = [r["image"] for r in records for _ in r["caption"]]
    if len(images) != len(options):
        raise ValueError(f"{len(options)} option lists for {len(images)} captions")
    return [{"image": im, "caption_options": list(o)} for im, o in zip(images, options, strict=True)]


def read_order_options(folder: str | Path, records: Sequence[Mapping[str, Any]]) -> dict[int, list[tuple[str, ...]]]:
    """The materialised options of every ``seed<s>.json`` in ``folder``, checked against the Karpathy records
    (one entry per caption, same image, ``len(ORDER_OPTIONS)`` non-empty options); errors name file and entry."""
    folder = Path(folder)
    files = sorted(folder.glob("seed*.json"), key=lambda f: int(f.stem[4:]) if f.stem[4:].isdigit() else -1)
    if not files or any(not f.stem[4:].isdigit() for f in files):
        raise RecordError(f"{folder}: expected files seed<int>.json of materialised Order options")
    images = [r["image"] for r in records for _ in r["caption"]]
    out = {}
    for f in files:
        data = read_json_strict(f)
        if not isinstance(data, list) or len(data) != len(images):
            got = len(data) if isinstance(data, list) else type(data).__name__
            raise RecordError(f"{f}: expected a list of {len(images)} entries (one per caption), got {got}")
        opts = []
        for i, (entry, image) in enumerate(zip(data, images, strict=True)):
            at = where(f, i)
            if not isinstance(entry, dict) or entry.get("image") != image:
                raise RecordError(f"{at}: image {entry.get('image') if isinstance(entry, dict) else entry!r} "
                                  f"differs from the Karpathy file's {image!r}")
            o = entry.get("caption_options")
            if (not isinstance(o, list) or len(o) != len(ORDER_OPTIONS)
                    or not all(isinstance(c, str) and c.strip() for c in o)):
                raise RecordError(f"{at}: caption_options must be {len(ORDER_OPTIONS)} non-empty strings")
            opts.append(tuple(o))
        out[int(f.stem[4:])] = opts
    return out


def order_task(records: Sequence[Mapping[str, Any]], images_dir: str | Path, source: str | Path, name: str,
               options_by_seed: Mapping[int, Sequence[Sequence[str]]]) -> ChoiceTask:
    """One case per (seed, caption): the image of the caption's record and the seed's options."""
    if name not in ORDER_METRIC_NAME:
        raise ValueError(f"order benchmark name must be one of {sorted(ORDER_METRIC_NAME)}, got {name!r}")
    images_dir = Path(images_dir)
    rows = [(i, j, r["image"]) for i, r in enumerate(records) for j, _ in enumerate(r["caption"])]
    metas, options = [], []
    for seed, opts in options_by_seed.items():
        options.extend(tuple(o) for o in opts)
        metas.append(pd.DataFrame({
            "seed": seed, "record": [i for i, *_ in rows], "caption_index": [j for _, j, _ in rows],
            "image": [im for *_, im in rows],
            **{f"option_{k}": [o[n] for o in opts] for n, k in enumerate(ORDER_OPTIONS)},
        }))
    meta = pd.concat(metas, ignore_index=True)
    keys = [str(images_dir / im) for im in meta["image"]]
    record_of = {str(images_dir / r["image"]): i for i, r in enumerate(records)}
    return ChoiceTask(
        name=name, meta=meta, image_keys=keys, captions=options,
        load_image=lambda key: open_image(key, where(source, record_of[key])),
        finish=lambda m, s: {name: finish_order(m, s)},
        image_file=Path,
    )


def finish_order(meta: pd.DataFrame, scores: np.ndarray) -> pd.DataFrame:
    df = meta.copy()
    for n, kind in enumerate(ORDER_OPTIONS):
        df[f"score_{kind}"] = scores[:, n].astype(np.float64)
    df["correct"] = pick_correct(scores, ORDER_CORRECT_INDEX, ORDER_TIE_RULE)
    df["tie"] = scores[:, 0] == scores[:, 1:].max(axis=1)
    return df


def _prepare_order(inputs: Mapping[str, Any], name: str, ann_key: str, images_key: str) -> ChoiceTask:
    path = need_path(inputs, ann_key, name)
    images = need_path(inputs, images_key, name, directory=True)
    records = load_karpathy(path, clean=False)
    if inputs.get(f"{name}_options"):
        options = read_order_options(need_path(inputs, f"{name}_options", name, directory=True), records)
    else:
        shuffler = TextShuffler(spacy_model=inputs["spacy_model"]) if inputs.get("spacy_model") else None
        options = compute_order_options(records, name, order_seeds(inputs.get("order_seeds")), shuffler=shuffler,
                                        base_seed=int(inputs.get("seed") or 0))
    return order_task(records, images, path, name, options)


def prepare_coco_order(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``coco_karpathy_test``, ``coco_images``; ``coco_order_options`` (materialised) or optional
    ``order_seeds``, ``spacy_model``, ``seed``."""
    return _prepare_order(inputs, "coco_order", "coco_karpathy_test", "coco_images")


def prepare_flickr_order(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``flickr_karpathy_test``, ``flickr_images``; ``flickr_order_options`` (materialised) or optional
    ``order_seeds``, ``spacy_model``, ``seed``."""
    return _prepare_order(inputs, "flickr_order", "flickr_karpathy_test", "flickr_images")


def aggregate_order(tables: Mapping[str, pd.DataFrame], name: str) -> dict[str, float]:
    df = table(tables, name, ("seed", "correct", "tie", *(f"option_{k}" for k in ORDER_OPTIONS)))
    correct = pd.Series(as_bool(df["correct"]), index=df.index)
    per_seed = correct.groupby(df["seed"]).mean()
    m, s = mean_std(per_seed.to_numpy())
    original = np.array(as_text(df["option_original"]), dtype=object)
    # share of perturbed options equal to the original (a perturbation that changed nothing: a sure tie)
    unchanged = np.mean([np.array(as_text(df[f"option_{k}"]), dtype=object) == original for k in ORDER_KINDS])
    p = f"aro/{ORDER_METRIC_NAME[name]}"
    return checked({f"{p}/acc": m, f"{p}/acc_std": s, f"{p}/n_seeds": len(per_seed),
                    f"{p}/n_cases": int(correct.groupby(df["seed"]).size().iloc[0]),
                    f"{p}/tie_rate": float(as_bool(df["tie"]).mean()), f"{p}/unchanged_rate": float(unchanged)})


register(Benchmark("vg_relation", "ARO VG-Relation", prepare_vg_relation, aggregate_vg_relation,
               ("vg_relation",),
                   headline=("aro/vg_relation/macro_acc",)))
register(Benchmark("vg_attribution", "ARO VG-Attribution", prepare_vg_attribution,
                   lambda t, aro_vga_min_count=VG_ATTRIBUTION_MIN_COUNT: aggregate_vg_attribution(
                       t, min_count=int(aro_vga_min_count)),
                   ("vg_attribution",), settings=("aro_vga_min_count",),
                   headline=("aro/vg_attribution/macro_acc",)))
register(Benchmark("coco_order", "ARO COCO-Order (Karpathy test)", prepare_coco_order,
               partial(aggregate_order, name="coco_order"), ("coco_order",),
                   headline=("aro/coco_order/acc",)))
register(Benchmark("flickr_order", "ARO Flickr30k-Order (Karpathy test)", prepare_flickr_order,
               partial(aggregate_order, name="flickr_order"), ("flickr_order",),
                   headline=("aro/flickr30k_order/acc",)))

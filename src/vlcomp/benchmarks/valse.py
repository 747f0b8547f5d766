"""VALSE on its released files: validated foils only; ``valse/<instrument>/acc`` and ``/n`` per instrument file,
and with all 11 instruments CE-CLIP Table 1's 9 columns and both averages (``valse/avg_instruments``,
``valse/avg_columns``).

Runs with fewer files (the toy twin has no coreference instruments; ``valse_instruments`` may select files):
every printed column whose files are all present is still written (``valse/column/<column>/acc``), and two
averages over what is present let models be compared on the same files:

- ``valse/avg_present_instruments``: mean of the present instrument accuracies (``valse/n_instruments`` of them);
- ``valse/avg_present_columns``: mean of the present columns (``valse/n_columns`` of them; Counting only with all
  three counting files).

With all 11 files they equal ``valse/avg_instruments`` / ``valse/avg_columns``; neither is comparable with the
papers' VALSE Avg. when files are missing (the coreference instruments are among the hardest).

Every case is also scored on another case's image (:func:`vlcomp.eval.common.wrong_image_control`, not part of
VALSE's protocol): ``valse/<instrument>/wrong_image_acc``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..eval.common import (
    as_bool,
    as_text,
    checked,
    finish_pair_controlled,
    grouped_loader,
    key_part,
    need,
    need_path,
    table,
    wrong_image_control,
)
from ..eval.engine import ChoiceTask
from ..formats import valse as valse_ds
from .registry import Benchmark, register


def valse_task(cases_by_instrument: Mapping[str, Sequence[valse_ds.ValseCase]], roots: Mapping[str, str | Path],
               sources: Mapping[str, str | Path] | None = None, *, seed: int = 0) -> ChoiceTask:
    """All instruments in one task; the image key is the file path (CE-CLIP's folder choice per case); the
    wrong-image control's derangement is drawn from ``seed``."""
    rows = [(ins, c) for ins, cases in cases_by_instrument.items() for c in cases]
    keys = [str(c.image_path(roots)) for _, c in rows]  # a case without its image folder fails here, not later
    load = grouped_loader(keys, rows, sources)

    meta = pd.DataFrame({"instrument": [i for i, _ in rows], "id": [c.id for _, c in rows],
                         "image_file": [c.image_file for _, c in rows], "caption": [c.caption for _, c in rows],
                         "foil": [c.foil for _, c in rows]})
    controls, wrong = wrong_image_control(keys, seed, "valse")
    if wrong is not None:
        meta["wrong_image"] = wrong
    return ChoiceTask(
        name="valse", meta=meta, image_keys=keys, captions=[(c.caption, c.foil) for _, c in rows], load_image=load,
        finish=lambda m, s, extras=None: {"valse": finish_pair_controlled(m, s, valse_ds.correct, extras)},
        image_file=Path, controls=controls,
    )


def prepare_valse(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``valse_dir`` (VALSE ``data/``), ``valse_images`` (image folder key -> folder, keys of
    :data:`vlcomp.formats.valse.IMAGE_SOURCE` and ``coco_*``); optional ``valse_instruments``."""
    data_dir = need_path(inputs, "valse_dir", "valse", directory=True)
    roots = need(inputs, "valse_images", "valse")
    if not isinstance(roots, Mapping):
        raise ValueError(f"valse: input 'valse_images' must map image folder keys to folders, got {type(roots).__name__}")
    instruments = tuple(inputs.get("valse_instruments") or valse_ds.INSTRUMENTS)
    cases = valse_ds.load_all(data_dir, instruments)
    return valse_task(cases, roots, {i: data_dir / f"{i}.json" for i in instruments}, seed=int(inputs.get("seed") or 0))


def aggregate_valse(tables: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    df = table(tables, "valse", ("instrument", "correct"))
    correct, ins = as_bool(df["correct"]), np.array(as_text(df["instrument"]), dtype=object)
    acc = valse_ds.instrument_accuracies({i: correct[ins == i] for i in dict.fromkeys(ins.tolist())})
    out = {f"valse/{key_part(i)}/acc": a for i, a in acc.items()}
    out |= {f"valse/{key_part(i)}/n": int((ins == i).sum()) for i in acc}
    if "wrong_correct" in df.columns:  # the wrong-image control (not part of VALSE's protocol)
        wrong = as_bool(df["wrong_correct"])
        out |= {f"valse/{key_part(i)}/wrong_image_acc": float(wrong[ins == i].mean()) for i in acc}
    columns = valse_ds.present_column_accuracies(acc)
    out |= {f"valse/column/{c}/acc": a for c, a in columns.items()}
    out["valse/n_instruments"] = len(acc)
    out["valse/avg_present_instruments"] = valse_ds.average_over_present_instruments(acc)
    out["valse/n_columns"] = len(columns)
    if columns:
        out["valse/avg_present_columns"] = valse_ds.average_over_present_columns(acc)
    if all(i in acc for i in valse_ds.INSTRUMENTS):
        out["valse/avg_instruments"] = valse_ds.average_over_instruments(acc)
        out["valse/avg_columns"] = valse_ds.average_over_columns(acc)
    return checked(out)


register(Benchmark("valse", "VALSE (11 instruments, validated foils)", prepare_valse,
               aggregate_valse, ("valse",),
                   headline=("valse/avg_present_instruments",)))

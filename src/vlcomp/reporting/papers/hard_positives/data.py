"""The data and methods sections of the Hard Positives report (catalog §6: HP-D1-D4, HP-M1-M6).

- HP-D1 / D2: the REPLACE and SWAP twins (``<benchmarks>/hardpos``, :mod:`vlcomp.twins.hardpos`): their sizes and
  parts, counted in the twin's files, next to the paper's (:data:`vlcomp.formats.hardpos.SIZES`).
- HP-D3 / D4: the training data of the hard-positive generator (``mine@<key>`` of every ``mine`` entry whose
  generator is ``hardpos``, :mod:`vlcomp.generators.hardpos`): the summary each run writes to
  ``data/mined/<key>/summary.json`` (and logs to MLflow), keys ``mine/hardpos/...``: the caption count, the
  candidates and chosen positives of each type, the share of captions with a positive / negative, the negatives'
  categories and the NegCLIP collision.
- HP-M1-M6: the paper's methods as params define them (``methods.<m>``: loss, ``loss_weights``, batch, mined data,
  chains), the loss formulas (:mod:`vlcomp.losses.hardpos`' docstring, the reconstruction the loss implements) and
  the AMBIGUOUS choices.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ....io import read_json

GENERATOR = "hardpos"
#: The paper's training-data numbers (catalog §3.1, §5 item 9).
PAPER_CAPTIONS = 591_753
PAPER_SWAP_CANDIDATES = 119_071
PAPER_GENERATED = 710_824
PAPER_TEXTS = 1_775_259

#: The paper's method artifacts -> the toy methods that reproduce them.
METHOD_ARTIFACTS: dict[str, tuple[str, ...]] = {
    "HP-M1": ("hn_only",), "HP-M2": ("hp_hn",), "HP-M3": ("hp_hn_swap",), "HP-M4": ("hp_hn_replace",),
    "HP-M5": ("hp_only", "hp_hn_w25", "hp_hn_w50", "hp_hn_w75"), "HP-M6": ("clip_ft",),
}
#: What each method is in the paper (catalog §3.6).
PAPER_ROWS: dict[str, str] = {
    "hn_only": "Our HN: COCO + CREPE hard negatives, no hard positives (w_HN = 1)",
    "hp_hn": "Our HP+HN: + LLaMA-2 hard positives, w_HN = 1",
    "hp_hn_swap": "Our HP+HN (Swap-only): positives and negatives of the swap type only",
    "hp_hn_replace": "Our HP+HN (Replace-only): of the replace type only",
    "hp_only": "0 HN: hard positives only (w_HN = 0)",
    "hp_hn_w25": "0.25 HN", "hp_hn_w50": "0.50 HN", "hp_hn_w75": "0.75 HN",
    "clip_ft": "CLIP-COCO: COCO fine-tuning without hard negatives or positives (Table 10's control)",
}


# --------------------------------------------------------------------------- HP-D1 / D2: the twins


def twin_sizes(benchmarks_dir: str | Path) -> pd.DataFrame | None:
    """Per part of the twins (REPLACE Relations / Attributes, pooled REPLACE, SWAP): the toy's instances (counted in
    the pair files), its images (the benchmarks manifest's ``twin_counts``), the paper's instances and the toy's
    Relations : Attributes ratio against the paper's. None when the twin's files are missing."""
    from ....eval.inputs import read_manifest
    from ....formats.hardpos import SIZES, load_benchmark

    bench = Path(benchmarks_dir)
    try:
        inputs = read_manifest(bench)
        manifest = read_json(bench / "manifest.json")
        root = Path(inputs["hard_positives_dir"])
        n = {p: len(load_benchmark(root, p)) for p in ("replace_rel", "replace_att", "swap")}
    except (FileNotFoundError, KeyError):
        return None
    counts = manifest.get("twin_counts") or {}
    rows = [
        {"part": "REPLACE Relations", "toy instances": n["replace_rel"], "paper instances": SIZES["replace_rel"],
         "toy images": math.nan, "images / cropping": "whole images (as the released VL-CheckList loader)"},
        {"part": "REPLACE Attributes", "toy instances": n["replace_att"], "paper instances": SIZES["replace_att"],
         "toy images": math.nan, "images / cropping": "whole images"},
        {"part": "REPLACE (pooled)", "toy instances": n["replace_rel"] + n["replace_att"],
         "paper instances": SIZES["replace_rel"] + SIZES["replace_att"],
         "toy images": counts.get("hardpos/replace/n_images", math.nan), "images / cropping": "whole images"},
        {"part": "SWAP", "toy instances": n["swap"], "paper instances": SIZES["swap"], "toy images": math.nan,
         "images / cropping": "cropped to the pair's box (ARO's VG-Attribution: the same twin file)"},
    ]
    df = pd.DataFrame(rows)
    ratio_toy = n["replace_rel"] / max(1, n["replace_att"])
    ratio_paper = SIZES["replace_rel"] / SIZES["replace_att"]
    df["Relations : Attributes"] = [f"toy {ratio_toy:.2f}, paper {ratio_paper:.2f}" if p == "REPLACE (pooled)" else ""
                                    for p in df["part"]]
    return df.astype({"toy images": "Float64"})


# --------------------------------------------------------------------------- HP-D3 / D4: the generator


def hardpos_mined(params: Mapping[str, Any]) -> list[tuple[str, str, tuple[str, ...]]]:
    """Every mined dataset of the hard-positive generator: (the ``mining`` key = its folder under ``data/mined``, the
    ``mine`` entry, its types), in params order; the ``mine`` entries no ``mining`` key runs are left out."""
    from ....config import registered_generator

    mine, mining = params.get("mine") or {}, params.get("mining") or {}
    entries = {g for g in mine if registered_generator(mine, g) == GENERATOR}
    out = []
    for key, item in mining.items():
        g = (item or {}).get("generator", key)
        if g in entries:
            types = tuple((mine.get(g) or {}).get("types") or ("swap", "replace"))
            out.append((key, g, types))
    return out


def read_summary(mined_root: str | Path, key: str) -> dict[str, float] | None:
    path = Path(mined_root) / key / "summary.json"
    return read_json(path) if path.exists() else None


def _get(s: Mapping[str, float], name: str) -> float:
    return float(s.get(f"mine/{GENERATOR}/{name}", math.nan))


def _share(a: float, b: float) -> float:
    return a / b if b and not math.isnan(a) and not math.isnan(b) else math.nan


#: The generator summary's rows: (quantity, its value from a summary, the paper's value, how the paper's is derived).
SUMMARY_ROWS: tuple[tuple[str, Any, float, str], ...] = (
    ("captions", lambda s: _get(s, "n_captions"), PAPER_CAPTIONS, "COCO 2017 train"),
    ("captions passing the paper's SWAP filter ('and', < 15 words)",
     lambda s: _get(s, "candidates/paper_swap_filter"), PAPER_SWAP_CANDIDATES, "§3.1"),
    ("share of captions with a SWAP candidate",
     lambda s: _share(_get(s, "candidates/swap"), _get(s, "n_captions")), PAPER_SWAP_CANDIDATES / PAPER_CAPTIONS,
     "119,071 / 591,753"),
    ("share of captions with a REPLACE candidate",
     lambda s: _share(_get(s, "candidates/replace"), _get(s, "n_captions")), 1.0,
     "the LLM was asked for all 591,753"),
    ("share of captions with both types", lambda s: _share(_get(s, "candidates/both"), _get(s, "n_captions")),
     PAPER_SWAP_CANDIDATES / PAPER_CAPTIONS, "every SWAP candidate also got a REPLACE generation"),
    ("share of captions with a hard positive", lambda s: _get(s, "share_with_positive"), 1.0,
     "one per caption after subsampling (§3.3)"),
    ("type mix: share of the positives that are SWAP",
     lambda s: _share(_get(s, "chosen/swap"), _get(s, "captions_with_positive")), math.nan,
     "not stated (the subsampling is not described, AMBIGUOUS)"),
    ("type mix: share of the positives that are REPLACE",
     lambda s: _share(_get(s, "chosen/replace"), _get(s, "captions_with_positive")), math.nan, "not stated"),
    ("captions with both types: SWAP drawn", lambda s: _get(s, "chosen_when_both/swap"), math.nan,
     "AMBIGUOUS: how one positive is chosen is not stated (here: uniform draw)"),
    ("captions with both types: REPLACE drawn", lambda s: _get(s, "chosen_when_both/replace"), math.nan, ""),
    ("REPLACE by rule: synonym", lambda s: _get(s, "rule/replace_synonym"), math.nan,
     "the toy's rules (the paper: an LLM)"),
    ("REPLACE by rule: converse", lambda s: _get(s, "rule/replace_converse"), math.nan, ""),
    ("share of captions with a hard negative", lambda s: _get(s, "share_with_negative"), 1.0,
     "one CREPE negative per caption (§3.2)"),
    ("NegCLIP collision: positives NegCLIP's swap rules could write as a negative",
     lambda s: _get(s, "negclip_collision/share"), math.nan, "not measured in the paper"),
    ("NegCLIP collision, SWAP positives", lambda s: _get(s, "negclip_collision/share_swap"), math.nan, ""),
    ("NegCLIP collision, REPLACE positives", lambda s: _get(s, "negclip_collision/share_replace"), math.nan, ""),
)


def generator_table(mined_root: str | Path, params: Mapping[str, Any]) -> pd.DataFrame | None:
    """HP-D3 / D4: one row per quantity of :data:`SUMMARY_ROWS` (and per negative category), one column per mined
    dataset of the generator (its ``summary.json``; ``not run`` when missing), and the paper's value. None when
    params mine nothing with the generator."""
    mined = hardpos_mined(params)
    if not mined:
        return None
    summaries = {key: read_summary(mined_root, key) for key, _, _ in mined}
    cats = sorted({k.removeprefix(f"mine/{GENERATOR}/negatives/") for s in summaries.values() if s
                   for k in s if k.startswith(f"mine/{GENERATOR}/negatives/")})
    rows = []
    specs = [*SUMMARY_ROWS, *((f"negatives of category {c} (share of the negatives)",
                               (lambda s, c=c: _share(_get(s, f"negatives/{c}"), _get(s, "captions_with_negative"))),
                               math.nan, "CREPE types used: not stated (AMBIGUOUS)") for c in cats)]
    for what, fn, paper, how in specs:
        row: dict[str, Any] = {"quantity": what}
        for key, _, types in mined:
            s = summaries[key]
            row[f"{key} ({'+'.join(types)})"] = fn(s) if s is not None else math.nan
        row |= {"paper": paper, "paper: from": how}
        rows.append(row)
    return pd.DataFrame(rows)


def generator_shown(df: pd.DataFrame, mined_root: str | Path, params: Mapping[str, Any]) -> pd.DataFrame:
    """:func:`generator_table` for reading: shares in percent, counts whole; a dataset without a summary reads
    ``not run``, a quantity its summary lacks ``not in its summary``; the paper's ``not stated`` where it prints
    none."""
    missing = {key for key, _, _ in hardpos_mined(params) if read_summary(mined_root, key) is None}
    out = df.copy().astype(object)
    for col in df.columns[1:]:
        key = col.split(" (")[0]
        for i, (what, v) in enumerate(zip(df["quantity"], df[col], strict=True)):
            if col == "paper: from":
                continue
            if isinstance(v, float) and math.isnan(v):
                out.iat[i, df.columns.get_loc(col)] = ("not stated" if col == "paper" else
                                                       "not run" if key in missing else "not in its summary")
            elif "share" in what:
                out.iat[i, df.columns.get_loc(col)] = f"{100 * v:.1f}%"
            else:
                out.iat[i, df.columns.get_loc(col)] = f"{v:,.0f}"
    return out


def missing_summaries(mined_root: str | Path, params: Mapping[str, Any]) -> list[str]:
    return [f"data/mined/{key}/summary.json" for key, _, _ in hardpos_mined(params)
            if read_summary(mined_root, key) is None]


# --------------------------------------------------------------------------- HP-M1..M6: methods and the loss


def methods_table(params: Mapping[str, Any]) -> pd.DataFrame:
    """One row per method of :data:`METHOD_ARTIFACTS`: its artifact, what it is in the paper, and as params define
    it (label, mined data and its types, loss, loss weights and arguments, the rows a batch carries, its chains);
    ``not in params`` for a method params lack."""
    from ....config import registered_generator

    methods, seeds, mine = params.get("methods") or {}, params.get("seeds") or {}, params.get("mine") or {}
    rows = []
    for artifact, ms in METHOD_ARTIFACTS.items():
        for m in ms:
            spec = methods.get(m)
            if spec is None:
                rows.append({"artifact": artifact, "method": f"`{m}`", "paper": PAPER_ROWS[m],
                             "status": "not in params"})
                continue
            spec = spec or {}
            g = spec.get("generator") or ""
            ours = bool(g) and g in mine and registered_generator(mine, g) == GENERATOR
            types = ((mine.get(g) or {}).get("types") or ("swap", "replace")) if ours else None
            sd = seeds.get(m)
            chains = "first chain only" if isinstance(sd, dict) and sd.get("chains") == "first" else "every chain"
            rows.append({"artifact": artifact, "method": f"`{m}`", "paper": PAPER_ROWS[m], "status": "",
                         "label": spec.get("label", m), "mined data": g,
                         "types": "+".join(types) if types else "",
                         "loss": spec.get("loss", ""), "loss_weights": _flow(spec.get("loss_weights")),
                         "loss_args": _flow(spec.get("loss_args")), "batch": _flow(spec.get("batch")),
                         "chains": chains})
    return pd.DataFrame(rows).fillna("")


def _flow(v: Any) -> str:
    if not v:
        return ""
    import yaml

    return yaml.safe_dump(v, default_flow_style=True, width=10**6).strip()


def loss_markdown() -> str:
    """The loss formulas and choices, from :mod:`vlcomp.losses.hardpos`' docstring (``::`` blocks as code)."""
    from ....losses import hardpos

    doc = hardpos.__doc__ or ""
    start = doc.find("Notation:")
    body = doc[start:] if start >= 0 else doc
    out, lines, i = [], body.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith("::"):
            out.append(_inline(line.rstrip()[:-1]))
            block = []
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
                block.append(lines[i][4:])
                i += 1
            out += ["", "```text", *[b for b in "\n".join(block).strip("\n").splitlines()], "```", ""]
            continue
        out.append(_inline(line))
        i += 1
    return "\n".join(out)


def _inline(line: str) -> str:
    """reST inline literals as Markdown code."""
    return re.sub(r"``([^`]+)``", r"`\1`", line)


def ambiguous_markdown(params: Mapping[str, Any]) -> str:
    """The AMBIGUOUS choices of the methods (catalog §3.1-3.4, §5 item 11) and where each is set."""
    methods = params.get("methods") or {}

    def weight(m: str) -> str:
        w = ((methods.get(m) or {}).get("loss_weights") or {}).get("negatives_loss")
        return "not in params" if m not in methods else ("1 (default)" if w is None else f"{w:g}")

    mine = [(k, g, t) for k, g, t in hardpos_mined(params)]
    return "\n".join([
        "- **w_HN = 0 means no negatives anywhere** (`hp_only`): its batch carries no hard negative, so L_con is "
        "CLIP's and there is no L_HN (the paper calls the row 'hard positives only'; its REPLACE Orig 58.5 below "
        "CLIP's 61.6 fits a model that never pushed a negative down). TSVLC's code would have kept them in L_con.",
        "- **Negatives in L_con otherwise**: for w_HN > 0 the batch's hard negatives are extra image->text columns of "
        "the contrastive loss (TSVLC's default), besides the two-way L_HN.",
        f"- **w_HN per method** (`loss_weights.negatives_loss`): HP+HN {weight('hp_hn')}, HN {weight('hn_only')}, "
        f"0.25 / 0.50 / 0.75 HN {weight('hp_hn_w25')} / {weight('hp_hn_w50')} / {weight('hp_hn_w75')}; the "
        "hard-positive weight is 1 (not stated in the paper).",
        "- **SWAP or REPLACE when both apply**: one hard positive per caption, its type drawn uniformly among the "
        "types the caption has (the generator's summary counts the draw, `chosen_when_both`).",
        "- **Which CREPE negatives**: one per caption, the category drawn uniformly among SugarCrepe's categories of "
        "the allowed types that give a valid negative (swap: swap_obj / swap_att; replace: replace_obj / "
        "replace_att / replace_rel); Swap-only / Replace-only restrict the negatives and the positives to one type "
        "(`mine.<entry>.types`).",
        "- **'Fewer than 15 words'** is strict (`n_words < 15`), as the main text says.",
        "- **Mined datasets of the generator**: " + ("; ".join(f"`data/mined/{k}` (`mine.{g}`, types "
                                                           f"{'+'.join(t)})" for k, g, t in mine)
                                                 if mine else "none in params yet") + ".",
    ])

"""Evaluation stages of the paper profile: the papers' released-format runners on one model.

- ``evaluate_base`` / ``evaluate@<variant>``: a model of this pipeline (``models/base`` = the resolved OpenAI
  CLIP, ``models/finetune/<variant>`` = a fine-tuned variant), rebuilt from its ``model.json`` + ``model.pt``
  through the model zoo (``family: openclip``), so it is scored exactly as a released open_clip checkpoint is;
- ``evaluate_released@<name>``: a released checkpoint of ``paper_models`` (NegCLIP, CE-CLIP, CoN-CLIP, TSVLC,
  BLIP, FLAVA, OpenAI CLIP), built by name.

Both run every benchmark of ``evaluate.benchmarks`` on the inputs manifest of the benchmarks stage and write
``items/*.parquet``, ``metrics.json`` (derived from the saved tables) and ``provenance.json``
(:func:`vlcomp.eval.run.evaluate_scorer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..device import resolve_device
from ..eval.run import evaluation_benchmarks, evaluation_inputs
from ..io import read_json


def evaluation_settings(params: Mapping[str, Any]) -> tuple[list[str], dict[str, Any], str]:
    """``(benchmarks, inputs, device)`` from ``evaluate.benchmarks``, ``paper_inputs`` and ``paper_evaluate``
    (the script path outside DVC; the stages read the benchmarks stage's manifest instead)."""
    settings = params.get("paper_evaluate") or {}
    return evaluation_benchmarks(params), evaluation_inputs(params), resolve_device(str(settings.get("device", "auto")), param="paper_evaluate.device")


def checkpoint_spec(ckpt_dir: str | Path) -> dict[str, Any]:
    """The zoo spec of a pipeline model directory (``model.json`` + ``model.pt``)."""
    ckpt = Path(ckpt_dir)
    meta = read_json(ckpt / "model.json")
    for key in ("arch", "tokenizer", "context_length"):
        if key not in meta:
            raise ValueError(f"{ckpt / 'model.json'}: missing field {key!r}")
    # the architecture name carries the activation (``-quickgelu``, checked by the paper pretrain stage), so
    # the file is not marked OpenAI-derived here: that would force QuickGELU onto a GELU architecture
    return {"family": "openclip", "arch": meta["arch"], "weights": str(ckpt / "model.pt"), "openai_derived": False,
            "tokenizer": meta["tokenizer"], "context_length": meta["context_length"]}


def checkpoint_scorer(name: str, ckpt_dir: str | Path, device: str):
    from ..models.zoo import build_scorer

    return build_scorer(name, checkpoint_spec(ckpt_dir), device=device)

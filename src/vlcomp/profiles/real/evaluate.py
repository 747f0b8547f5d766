"""Evaluation stages of the real profile: the papers' released-format runners on one model.

- ``evaluate_base`` / ``evaluate@<variant>``: a model of this pipeline (``models/base`` = the resolved OpenAI
  CLIP, ``models/finetune/<variant>`` = a fine-tuned variant), rebuilt from its ``model.json`` + ``model.pt``
  through the model zoo (``family: openclip``), so it is scored exactly as a released open_clip checkpoint is;
- ``evaluate_released@<name>``: a released checkpoint of ``released_models`` (NegCLIP, CE-CLIP, CoN-CLIP, TSVLC,
  BLIP, FLAVA, OpenAI CLIP), built by name through the zoo (:mod:`.zoo`);
- :func:`evaluate_released`: the same for several models outside DVC (``scripts/evaluate_released.py``).

Both run every benchmark of ``evaluate.benchmarks`` on the inputs manifest of the benchmarks stage and write
``items/*.parquet``, ``metrics.json`` (derived from the saved tables) and ``provenance.json``
(:func:`vlcomp.eval.run.evaluate_scorer`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...device import resolve_device
from ...eval.inputs import evaluation_benchmarks
from ...eval.run import evaluate_scorer, evaluation_inputs
from ...io import read_json


def evaluation_settings(params: Mapping[str, Any]) -> tuple[list[str], dict[str, Any], str]:
    """``(benchmarks, inputs, device)`` from ``evaluate.benchmarks``, ``real_inputs`` and ``real_evaluate``
    (the script path outside DVC; the stages read the benchmarks stage's manifest instead)."""
    settings = params.get("real_evaluate") or {}
    return evaluation_benchmarks(params), evaluation_inputs(params), resolve_device(str(settings.get("device", "auto")), param="real_evaluate.device")


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
    from .zoo import build_scorer

    return build_scorer(name, checkpoint_spec(ckpt_dir), device=device)


def evaluate_released(params: Mapping[str, Any], out_root: str | Path, *, models: Sequence[str] | None = None,
                      benchmarks: Sequence[str] | None = None, scorers: Mapping[str, Any] | None = None,
                      log_run=None) -> dict[str, dict[str, float]]:
    """Evaluate each model of ``real_evaluate.models`` (specs in ``released_models``) on each benchmark, one output
    folder per model under ``out_root``; returns ``{model: metrics}``.

    ``scorers`` (name -> ImageTextScorer) bypasses the zoo (tests build random-init models); ``log_run`` is a
    context-manager factory ``(model, params) -> run`` with ``log_metrics`` (``vlcomp.tracking.stage_run``: one
    MLflow run per model)."""
    from .zoo import build_scorer

    settings = params.get("real_evaluate") or {}
    models = list(models or settings.get("models") or [])
    benchmarks = list(benchmarks or evaluation_benchmarks(params))
    if not models:
        raise ValueError("real_evaluate.models must name at least one model")
    specs = params.get("released_models") or {}
    inputs = evaluation_inputs(params)
    device = resolve_device(str(settings.get("device", "auto")), param="real_evaluate.device")
    results = {}
    for name in models:
        if scorers is not None and name in scorers:
            scorer = scorers[name]
        elif name not in specs:
            raise ValueError(f"real_evaluate.models: {name!r} has no entry in released_models")
        else:
            scorer = build_scorer(name, specs[name], device=device)
        used = {"model": name, "spec": dict(getattr(scorer, "spec", {}) or specs.get(name, {})),
                "benchmarks": benchmarks, "device": device}
        run = log_run(name, used) if log_run else contextlib.nullcontext()
        with run as tr:
            results[name] = evaluate_scorer(scorer, benchmarks, inputs, Path(out_root) / name,
                                            {"profile": "real", **used}, tr)
    return results

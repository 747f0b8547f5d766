"""scripts/ab_training.py's comparison: equal outputs pass, and a changed tensor, history value or file fails."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import torch

SPEC = importlib.util.spec_from_file_location("ab_training", Path(__file__).parents[1] / "scripts" / "ab_training.py")
ab = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(ab)


def _workspace(root: Path, weight: float = 1.0, loss: float = 0.5, timing: float = 10.0, extra: bytes = b"x") -> Path:
    d = root / "models" / "finetune" / "v"
    d.mkdir(parents=True)
    torch.save({"state_dict": {"w": torch.full((2, 2), weight), "b": torch.zeros(2)}}, d / "model.pt")
    (d / "history.json").write_text(json.dumps([{"step": 1, "contrastive_loss": loss, "samples_per_s": timing}]))
    (root / "data" / "mined").mkdir(parents=True)
    (root / "data" / "mined" / "f.bin").write_bytes(extra)
    return root


def test_equal_outputs_pass_and_timings_are_ignored(tmp_path, capsys):
    a, b = _workspace(tmp_path / "a"), _workspace(tmp_path / "b", timing=99.0)
    assert ab.compare(a, b, ["models", "data/mined"]) == []
    assert capsys.readouterr().out.count("SAME") == 3


def test_every_kind_of_difference_is_found(tmp_path):
    a = _workspace(tmp_path / "a")
    assert ab.compare(a, _workspace(tmp_path / "b", weight=1.0 + 2**-20), ["models"]) == ["models/finetune/v/model.pt"]
    assert ab.compare(a, _workspace(tmp_path / "c", loss=0.5000001), ["models"]) == ["models/finetune/v/history.json"]
    assert ab.compare(a, _workspace(tmp_path / "d", extra=b"y"), ["data/mined"]) == ["data/mined/f.bin"]
    e = _workspace(tmp_path / "e")
    (e / "data" / "mined" / "g.bin").write_bytes(b"")
    assert ab.compare(a, e, ["data/mined"]) == ["data/mined/g.bin"]

"""The fine-tuning budget probe's relation-swap builder (scripts/probe_finetune_budget.py)."""

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("open_clip")
_path = Path(__file__).resolve().parents[1] / "scripts" / "probe_finetune_budget.py"
_spec = importlib.util.spec_from_file_location("probe_finetune_budget", _path)
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)


def test_relation_swaps_hand_cases():
    anns = [{"caption": ["a red circle to the left of a blue square",
                         "the cross is above the large heart on a gray background",
                         "a red circle and a blue square",                       # no relation: skipped
                         "a star below a cross with a heart"]},                  # third object: skipped
            {"caption": ["there is a small star pointing at a green arrow"]}]
    assert probe.relation_swaps(anns, limit=10) == [
        (0, "a red circle to the left of a blue square", "a blue square to the left of a red circle"),
        (0, "the cross is above the large heart on a gray background",
         "the large heart is above the cross on a gray background"),
        (1, "there is a small star pointing at a green arrow", "there is a green arrow pointing at a small star"),
    ]
    assert len(probe.relation_swaps(anns, limit=1)) == 1

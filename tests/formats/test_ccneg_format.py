"""The CC-Neg writer (``formats.ccneg.write_ccneg``): round trip through ``load_ccneg``, byte-identical output,
plain containers only (``weights_only=True``), and the writer refusing what the loader refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from vlcomp.formats import ccneg
from vlcomp.formats.records import RecordError

NEGS = ("a red circle not above a blue square", "a red circle, without a blue square", "a star with no heart")


def _data() -> tuple[list[str], list[dict], dict[int, list[int]]]:
    paths = [ccneg.released_image_path(f"sub/{i}.png") for i in range(3)]
    anns = [ccneg.ccneg_annotation(f"caption {i}", n, subject="a red circle", chosen_object="a blue square",
                                   exclusion_prompt="a red circle") for i, n in enumerate(NEGS)]
    return paths, anns, {2: [1], 1: [0, 2]}


def test_annotation_has_the_catalog_fields() -> None:
    ann = ccneg.ccneg_annotation("c", "n", subject="s", chosen_object="o", exclusion_prompt="e")
    assert ann == {"json": {"caption": "c"},
                   "sop_data": {"negative-prompt": "n", "sop_decomposition": {"subject": "s"},
                                "sop_chosen_object": "o", "exclusion-prompt": "e"}}
    assert ccneg.ccneg_annotation("c", "n") == {"json": {"caption": "c"}, "sop_data": {"negative-prompt": "n"}}


def test_released_image_path_inverts_image_file() -> None:
    released = ccneg.released_image_path("cc3m_subset_images_extracted_final/x.png")
    assert released == "/workspace/datasets/cc3m/cc3m_subset_images_extracted_final/x.png"
    case = ccneg.CCNegCase(0, released, "c", "n", 1)
    assert case.image_file("/data/ccneg_images") == Path("/data/ccneg_images/cc3m_subset_images_extracted_final/x.png")
    with pytest.raises(ValueError, match="empty"):
        ccneg.released_image_path("")


def test_write_then_load_round_trip(tmp_path) -> None:
    paths, anns, num_ops = _data()
    path = ccneg.write_ccneg(tmp_path / "ccneg_preprocessed.pt", paths, anns, num_ops)
    cases = ccneg.load_ccneg(path)
    assert [c.image_path for c in cases] == paths
    assert [c.caption for c in cases] == ["caption 0", "caption 1", "caption 2"]
    assert [c.negated_caption for c in cases] == list(NEGS)
    assert [c.k for c in cases] == [1, 2, 1]
    assert [c.words for c in cases] == [("not",), ("without",), ("no",)]
    raw = torch.load(path, weights_only=True)  # plain containers only
    assert list(raw) == ["image_paths", "annotations", "num_ops"]
    assert raw["num_ops"] == {1: [0, 2], 2: [1]}  # keys sorted, ints
    assert raw["annotations"][0]["sop_data"]["sop_decomposition"] == {"subject": "a red circle"}


def test_same_input_same_bytes(tmp_path) -> None:
    paths, anns, num_ops = _data()
    a = ccneg.write_ccneg(tmp_path / "a" / "ccneg_preprocessed.pt", paths, anns, num_ops)
    b = ccneg.write_ccneg(tmp_path / "b" / "ccneg_preprocessed.pt", paths, anns, num_ops)
    assert a.read_bytes() == b.read_bytes()
    assert sorted(p.name for p in a.parent.iterdir()) == ["ccneg_preprocessed.pt"]  # no temporary file left


def test_writer_refuses_what_the_loader_refuses(tmp_path) -> None:
    paths, anns, _ = _data()
    target = tmp_path / "bad.pt"
    with pytest.raises(RecordError, match=r"bad\.pt: 'num_ops'\[1\] lists 7"):
        ccneg.write_ccneg(target, paths, anns, {1: [0, 7]})
    with pytest.raises(RecordError, match=r"bad\.pt: record 2: duplicate image path"):
        ccneg.write_ccneg(target, [paths[0], paths[1], paths[0]], anns, {1: [0]})
    with pytest.raises(RecordError, match=r"bad\.pt: record 1: field 'sop_data': missing field 'negative-prompt'"):
        ccneg.write_ccneg(target, paths, [anns[0], {"json": {"caption": "c"}, "sop_data": {}}, anns[2]], {})
    with pytest.raises(TypeError, match="cannot be written"):
        ccneg.write_ccneg(target, paths, [anns[0], anns[1], {**anns[2], "x": object()}], {})
    assert not target.exists()


def test_written_file_scores_through_the_record(tmp_path) -> None:
    """The record reads the written file: the last ``ccneg_n_eval`` records, negated captions without commas."""
    from vlcomp.benchmarks.ccneg import prepare_ccneg
    from vlcomp.twins.images import write_png

    paths, anns, num_ops = _data()
    images = tmp_path / "images"
    for i in range(3):
        write_png(images / "sub" / f"{i}.png", torch.full((4, 4, 3), 10 * i, dtype=torch.uint8).numpy())
    path = ccneg.write_ccneg(tmp_path / "ccneg_preprocessed.pt", paths, anns, num_ops)
    task = prepare_ccneg({"ccneg_annotations": str(path), "ccneg_images": str(images), "ccneg_n_eval": 2})
    assert task.captions == [("caption 1", "a red circle without a blue square"),
                             ("caption 2", "a star with no heart")]
    assert task.load_image(task.image_keys[0]).size == (4, 4)

"""File helpers: atomic writes leave nothing half-written; validated reads name the file (and line)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlcomp.io import (
    atomic_dir,
    atomic_path,
    read_json,
    read_jsonl,
    read_npy,
    write_json,
    write_jsonl,
    write_npy,
)


class _Boom(RuntimeError):
    pass


# ------------------------------------------------------------------------------------------ atomic writes


def test_atomic_path_renames_on_success(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "out.txt"
    with atomic_path(out) as tmp:
        assert tmp.parent == out.parent and tmp != out
        tmp.write_text("done")
        assert not out.exists()
    assert out.read_text() == "done"
    assert [p.name for p in out.parent.iterdir()] == ["out.txt"]


def test_atomic_path_leaves_nothing_when_the_block_raises(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with pytest.raises(_Boom), atomic_path(out) as tmp:
        tmp.write_text("half")
        raise _Boom
    assert list(tmp_path.iterdir()) == []


def test_atomic_path_keeps_an_existing_output_when_the_block_raises(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old")
    with pytest.raises(_Boom), atomic_path(out) as tmp:
        tmp.write_text("new")
        raise _Boom
    assert out.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_write_json_failing_midway_keeps_the_old_file(tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    write_json(out, {"a": 1})
    with pytest.raises(TypeError):
        write_json(out, {"a": object()})  # not serialisable: fails after the temp file is opened
    assert read_json(out) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_atomic_dir_replaces_on_success(tmp_path: Path) -> None:
    out = tmp_path / "split"
    out.mkdir()
    (out / "stale.txt").write_text("old")
    with atomic_dir(out) as tmp:
        (tmp / "images.npy").write_text("x")
        assert (out / "stale.txt").exists()  # the old output stays until the block succeeds
    assert [p.name for p in out.iterdir()] == ["images.npy"]
    assert [p.name for p in tmp_path.iterdir()] == ["split"]


def test_atomic_dir_leaves_nothing_when_the_block_raises(tmp_path: Path) -> None:
    out = tmp_path / "split"
    with pytest.raises(_Boom), atomic_dir(out) as tmp:
        (tmp / "part.txt").write_text("half")
        raise _Boom
    assert list(tmp_path.iterdir()) == []


def test_atomic_dir_keeps_an_existing_output_when_the_block_raises(tmp_path: Path) -> None:
    out = tmp_path / "split"
    out.mkdir()
    (out / "keep.txt").write_text("old")
    with pytest.raises(_Boom), atomic_dir(out) as tmp:
        (tmp / "keep.txt").write_text("new")
        raise _Boom
    assert [p.name for p in tmp_path.iterdir()] == ["split"]
    assert (out / "keep.txt").read_text() == "old"


# ------------------------------------------------------------------------------------------ round trips


def test_json_jsonl_npy_round_trip(tmp_path: Path) -> None:
    obj = {"b": [1, 2.5, "x"], "a": None, "é": "ü"}
    write_json(tmp_path / "a.json", obj)
    assert read_json(tmp_path / "a.json") == obj
    recs = [{"i": i, "s": "ünï"} for i in range(3)]
    write_jsonl(tmp_path / "a.jsonl", recs)
    assert read_jsonl(tmp_path / "a.jsonl") == recs
    arr = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    write_npy(tmp_path / "a.npy", arr)
    back = read_npy(tmp_path / "a.npy", dtype="uint8", ndim=3)
    np.testing.assert_array_equal(back, arr)


def test_write_json_is_canonical(tmp_path: Path) -> None:
    write_json(tmp_path / "a.json", {"b": 1, "a": 2})
    write_json(tmp_path / "b.json", {"a": 2, "b": 1})
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


# ------------------------------------------------------------------------------------------ broken reads


def test_read_jsonl_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "scenes.jsonl"
    p.write_text('{"a": 1}\n\n{"a": 2}\n{"a": \n{"a": 4}\n')
    with pytest.raises(ValueError, match=r"scenes\.jsonl:4: broken record"):
        read_jsonl(p)


def test_read_jsonl_rejects_a_non_object_line(tmp_path: Path) -> None:
    p = tmp_path / "scenes.jsonl"
    p.write_text('{"a": 1}\n[1, 2]\n')
    with pytest.raises(ValueError, match=r"scenes\.jsonl:2: record is a list, expected an object"):
        read_jsonl(p)


def test_read_jsonl_skips_blank_lines(tmp_path: Path) -> None:
    p = tmp_path / "a.jsonl"
    p.write_text('\n{"a": 1}\n   \n{"a": 2}')  # no final newline either
    assert read_jsonl(p) == [{"a": 1}, {"a": 2}]


def test_read_jsonl_truncated_inside_a_character_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "scenes.jsonl"
    p.write_bytes(b'{"a": 1}\n' + '{"a": "caf\u00e9"}'.encode()[:-3])  # cut inside the 2-byte "é"
    with pytest.raises(ValueError, match=r"scenes\.jsonl:2"):
        read_jsonl(p)


@pytest.mark.parametrize("cut", [1, 10, 60, 140])
def test_read_npy_truncated_names_the_file(tmp_path: Path, cut: int) -> None:
    p = tmp_path / "images.npy"
    write_npy(p, np.zeros((4, 8, 8, 3), dtype=np.uint8))
    data = p.read_bytes()
    p.write_bytes(data[: len(data) - cut])
    with pytest.raises(ValueError, match=r"images\.npy: corrupt array file"):
        read_npy(p)


def test_read_npy_empty_file_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "images.npy"
    p.write_bytes(b"")
    with pytest.raises(ValueError, match=r"images\.npy"):
        read_npy(p)


def test_read_npy_checks_dtype_and_ndim(tmp_path: Path) -> None:
    p = tmp_path / "a.npy"
    write_npy(p, np.zeros((2, 3), dtype=np.float32))
    with pytest.raises(ValueError, match=r"a\.npy: dtype float32, expected uint8"):
        read_npy(p, dtype="uint8")
    with pytest.raises(ValueError, match=r"a\.npy: 2-d array, expected 4-d"):
        read_npy(p, ndim=4)


def test_read_npy_refuses_pickles(tmp_path: Path) -> None:
    p = tmp_path / "a.npy"
    np.save(p, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"a\.npy"):
        read_npy(p)


@pytest.mark.parametrize("keep", [1, 5, 20])
def test_read_json_truncated_names_the_file(tmp_path: Path, keep: int) -> None:
    p = tmp_path / "captions.json"
    text = json.dumps([{"image": "a", "caption": ["x y z"]}])
    p.write_text(text[:keep])
    with pytest.raises(ValueError, match=r"captions\.json: not valid JSON"):
        read_json(p)


def test_read_json_truncated_inside_a_character_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "captions.json"
    p.write_bytes('["caf\u00e9"]'.encode()[:-3])  # ends with the first byte of "é"
    with pytest.raises(ValueError, match=r"captions\.json"):
        read_json(p)


def test_empty_json_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "captions.json"
    p.write_text("")
    with pytest.raises(ValueError, match=r"captions\.json: not valid JSON"):
        read_json(p)


@pytest.mark.parametrize("reader", [read_json, read_jsonl, read_npy])
def test_missing_file_is_named(tmp_path: Path, reader) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.x: file not found"):
        reader(tmp_path / "nope.x")


def test_write_json_writes_non_finite_floats_as_null(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    write_json(out, {"a": float("nan"), "b": [1.0, float("inf")], "c": {"d": -float("inf")}, "e": 0.5})
    text = out.read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"a": None, "b": [1.0, None], "c": {"d": None}, "e": 0.5}


def test_tree_digest_lists_every_file_with_its_sha256(tmp_path: Path) -> None:
    import hashlib

    from vlcomp.io import tree_digest, write_tree_digest

    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "b.txt").write_bytes(b"b")
    (tmp_path / "d" / "sub" / "a.txt").write_bytes(b"")
    want = (f"{hashlib.sha256(b'b').hexdigest()}  b.txt\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  sub/a.txt\n")  # sha256 of no bytes
    assert tree_digest(tmp_path / "d") == want
    out = write_tree_digest(tmp_path / "d", tmp_path / "d.sha256")
    assert out.read_text() == want
    (tmp_path / "d" / "sub" / "a.txt").write_bytes(b"x")  # a changed byte, a new file: both change the digest
    assert tree_digest(tmp_path / "d") != want
    (tmp_path / "d" / "sub" / "a.txt").write_bytes(b"")
    (tmp_path / "d" / "c").write_bytes(b"")
    assert tree_digest(tmp_path / "d") != want
    with pytest.raises(FileNotFoundError, match="not a directory"):
        tree_digest(tmp_path / "missing")

"""Real profile: real image files decoded on indexing (`vlcomp.formats.images`), the caption-file reader and the
world index (`vlcomp.profiles.real.world`), and `vlcomp.world.Split` over an indexed split."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlcomp.formats.images import ImageFiles, load_rgb
from vlcomp.formats.karpathy import read_caption_file
from vlcomp.formats.records import RecordError
from vlcomp.profiles.real.world import (
    INDEX_FORMAT,
    PaperSplitSpec,
    index_split,
    index_world,
    real_world_configs,
    sha256_file,
)
from vlcomp.world import Split

RED, GREEN, BLUE = (255, 0, 0), (0, 255, 0), (0, 0, 255)


def save(path: Path, arr: np.ndarray) -> Path:
    """Lossless PNG whatever the suffix (PIL reads by content)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(arr).save(path, format="PNG")
    return path


def solid(w: int, h: int, colour) -> np.ndarray:
    arr = np.zeros((h, w, 3), dtype=np.uint8)
    arr[:] = colour
    return arr


def vbands(w: int, h: int, colours) -> np.ndarray:
    """Side-by-side vertical bands of equal width."""
    arr = np.zeros((h, w, 3), dtype=np.uint8)
    n = len(colours)
    for i, c in enumerate(colours):
        arr[:, i * w // n : (i + 1) * w // n] = c
    return arr


def write_json(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path


# ----------------------------------------------------------------------------------------------- load_rgb


def test_load_rgb_4x2_centre_crop_is_the_middle_two_columns(tmp_path):
    # w=4, h=2, size 2: the shorter side is already 2 (no resize); centre crop keeps columns 1 and 2
    arr = np.zeros((2, 4, 3), dtype=np.uint8)
    for y in range(2):
        for x in range(4):
            arr[y, x] = (10 * x + y, 100 + 20 * x, 200 - 30 * y)
    out = load_rgb(save(tmp_path / "a.png", arr), 2)
    assert out.shape == (2, 2, 3)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, arr[:, 1:3])


def test_load_rgb_2x4_portrait_keeps_the_middle_two_rows(tmp_path):
    arr = np.arange(2 * 4 * 3, dtype=np.uint8).reshape(4, 2, 3) * 5
    out = load_rgb(save(tmp_path / "p.png", arr), 2)
    np.testing.assert_array_equal(out, arr[1:3])


@pytest.mark.parametrize("w,h,size", [(30, 20, 8), (20, 30, 8), (5, 3, 7), (64, 48, 16)])
def test_load_rgb_solid_colour_stays_that_colour(tmp_path, w, h, size):
    colour = (200, 30, 90)
    out = load_rgb(save(tmp_path / "s.png", solid(w, h, colour)), size)
    assert out.shape == (size, size, 3) and out.dtype == np.uint8
    assert (out == np.array(colour, dtype=np.uint8)).all()


def test_load_rgb_two_bands_left_red_right_blue(tmp_path):
    out = load_rgb(save(tmp_path / "b.png", vbands(8, 4, [RED, BLUE])), 4)
    assert out.shape == (4, 4, 3)
    left, right = out[:, 0].astype(int), out[:, -1].astype(int)
    assert (left[:, 0] > 200).all() and (left[:, 2] < 50).all()
    assert (right[:, 2] > 200).all() and (right[:, 0] < 50).all()


def test_load_rgb_landscape_keeps_the_middle_band(tmp_path):
    # w=48 h=8, size 4: resized to 24x4, the centre 4 columns come from original columns 20..27: green
    out = load_rgb(save(tmp_path / "l.png", vbands(48, 8, [RED, GREEN, BLUE])), 4).astype(int)
    assert (out[..., 1] > 200).all()
    assert (out[..., 0] < 60).all() and (out[..., 2] < 60).all()


def test_load_rgb_portrait_keeps_the_middle_band(tmp_path):
    arr = vbands(48, 8, [RED, GREEN, BLUE]).transpose(1, 0, 2).copy()  # horizontal bands, h=48 w=8
    out = load_rgb(save(tmp_path / "p.png", arr), 4).astype(int)
    assert (out[..., 1] > 200).all()
    assert (out[..., 0] < 60).all() and (out[..., 2] < 60).all()


def test_load_rgb_converts_grey_and_rgba_to_rgb(tmp_path):
    grey = np.full((6, 6), 77, dtype=np.uint8)
    Image.fromarray(grey).save(tmp_path / "g.png")
    out = load_rgb(tmp_path / "g.png", 4)
    assert out.shape == (4, 4, 3) and (out == 77).all()
    rgba = np.zeros((6, 6, 4), dtype=np.uint8)
    rgba[..., :3] = (10, 20, 30)
    rgba[..., 3] = 255
    Image.fromarray(rgba).save(tmp_path / "a.png")
    out = load_rgb(tmp_path / "a.png", 4)
    assert out.shape == (4, 4, 3) and (out == np.array([10, 20, 30], dtype=np.uint8)).all()


def test_load_rgb_missing_file_names_the_path(tmp_path):
    p = tmp_path / "nope" / "x.jpg"
    with pytest.raises(FileNotFoundError, match="x.jpg"):
        load_rgb(p, 4)


def test_load_rgb_corrupt_file_is_a_value_error_naming_the_path(tmp_path):
    p = tmp_path / "x.jpg"
    p.write_bytes(b"not an image")
    with pytest.raises(ValueError, match=r"x\.jpg"):
        load_rgb(p, 4)


def test_load_rgb_truncated_file_is_a_value_error_naming_the_path(tmp_path):
    rng = np.random.default_rng(0)
    full = save(tmp_path / "full.png", rng.integers(0, 256, (32, 32, 3), dtype=np.uint8))
    cut = tmp_path / "cut.png"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    with pytest.raises(ValueError, match=r"cut\.png"):
        load_rgb(cut, 8)


@pytest.mark.parametrize("w,h,size", [(640, 480, 224), (227, 224, 224), (7, 4, 4)])
def test_load_rgb_matches_open_clip_eval_resize_and_centre_crop(tmp_path, w, h, size):
    # the module docstring: "open_clip's evaluation transform for CLIP models (Resize(S, bicubic) + CenterCrop(S))"
    from torchvision import transforms as T

    arr = np.random.default_rng(1).integers(0, 256, (h, w, 3), dtype=np.uint8)
    p = save(tmp_path / "n.png", arr)
    ref = T.Compose([T.Resize(size, interpolation=T.InterpolationMode.BICUBIC), T.CenterCrop(size)])
    with Image.open(p) as im:
        expected = np.asarray(ref(im.convert("RGB")))
    np.testing.assert_array_equal(load_rgb(p, size), expected)


# ----------------------------------------------------------------------------------------------- ImageFiles


@pytest.fixture
def image_paths(tmp_path) -> list[Path]:
    rng = np.random.default_rng(0)
    sizes = [(12, 8), (8, 12), (10, 10), (20, 9), (9, 9)]
    return [save(tmp_path / "imgs" / f"{i}.png", rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
            for i, (w, h) in enumerate(sizes)]


def naive(paths, rows, size) -> np.ndarray:
    out = np.zeros((len(rows), size, size, 3), dtype=np.uint8)
    for k, i in enumerate(rows):
        out[k] = load_rgb(paths[i], size)
    return out


def test_image_files_len_shape_dtype(image_paths):
    files = ImageFiles(image_paths, 6)
    assert len(files) == 5
    assert files.shape == (5, 6, 6, 3)
    assert files.dtype == np.uint8 and files.ndim == 4
    assert files.missing() == []


@pytest.mark.parametrize("workers", [1, 3])
def test_image_files_indexing_matches_load_rgb_one_by_one(image_paths, workers):
    files = ImageFiles(image_paths, 6, workers=workers)
    np.testing.assert_array_equal(files[2], load_rgb(image_paths[2], 6))
    np.testing.assert_array_equal(files[np.int64(4)], load_rgb(image_paths[4], 6))
    np.testing.assert_array_equal(files[-1], load_rgb(image_paths[-1], 6))
    for sl, rows in ((slice(1, 4), [1, 2, 3]), (slice(None, None, -2), [4, 2, 0]), (slice(None), [0, 1, 2, 3, 4])):
        got = files[sl]
        assert got.shape == (len(rows), 6, 6, 3) and got.dtype == np.uint8
        np.testing.assert_array_equal(got, naive(image_paths, rows, 6))
    idx = np.array([3, 0, 3, 1])
    np.testing.assert_array_equal(files[idx], naive(image_paths, [3, 0, 3, 1], 6))
    np.testing.assert_array_equal(files[[4, 2]], naive(image_paths, [4, 2], 6))
    np.testing.assert_array_equal(files[np.array([2], dtype=np.int32)], naive(image_paths, [2], 6))


def test_image_files_one_and_three_workers_identical(image_paths):
    idx = np.array([4, 3, 2, 1, 0, 2])
    a = ImageFiles(image_paths, 8, workers=1)[idx]
    b = ImageFiles(image_paths, 8, workers=3)[idx]
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ImageFiles(image_paths, 8, workers=1)[:], ImageFiles(image_paths, 8, workers=3)[:])


def test_image_files_empty_selections(image_paths):
    files = ImageFiles(image_paths, 6, workers=2)
    assert files[3:3].shape == (0, 6, 6, 3)
    assert files[np.array([], dtype=np.int64)].shape == (0, 6, 6, 3)


@pytest.mark.parametrize("bad", [2.5, np.array([[0, 1]]), np.array([0.0, 1.0]), "0", (0, slice(None))])
def test_image_files_bad_index_type(image_paths, bad):
    with pytest.raises(TypeError, match="ImageFiles index"):
        ImageFiles(image_paths, 6)[bad]


def test_image_files_out_of_range_int(image_paths):
    with pytest.raises(IndexError):
        ImageFiles(image_paths, 6)[5]


def test_image_files_missing_lists_absent_files(image_paths, tmp_path):
    gone = [tmp_path / "imgs" / "gone.png", tmp_path / "other" / "x.jpg"]
    files = ImageFiles([image_paths[0], gone[0], image_paths[1], gone[1]], 6)
    assert files.missing() == gone
    with pytest.raises(FileNotFoundError, match="gone.png"):
        files[np.array([0, 1])]


def test_image_files_size_must_be_positive(image_paths):
    with pytest.raises(ValueError, match="image size 0"):
        ImageFiles(image_paths, 0)


# ----------------------------------------------------------------------------------------------- read_caption_file


def test_read_caption_file_per_caption_layout_grouped_in_first_appearance_order(tmp_path):
    p = write_json(tmp_path / "train.json", [
        {"image": "b.jpg", "caption": "  a dog runs ", "image_id": "coco_2"},
        {"image": "a.jpg", "caption": "a cat"},
        {"image": "b.jpg", "caption": "the dog\n"},
        {"image": "c.jpg", "caption": "a bird"},
        {"image": "a.jpg", "caption": "two cats "},
    ])
    assert read_caption_file(p) == [
        {"image": "b.jpg", "caption": ["a dog runs", "the dog"]},
        {"image": "a.jpg", "caption": ["a cat", "two cats"]},
        {"image": "c.jpg", "caption": ["a bird"]},
    ]


def test_read_caption_file_per_image_layout(tmp_path):
    p = write_json(tmp_path / "val.json", [
        {"image": "x.jpg", "caption": [" A man. ", "a person"]},
        {"image": "y.jpg", "caption": ["one"]},
    ])
    assert read_caption_file(p) == [{"image": "x.jpg", "caption": ["A man.", "a person"]},
                                    {"image": "y.jpg", "caption": ["one"]}]


@pytest.mark.parametrize("records,record,message", [
    ([{"image": "a.jpg"}], 0, "missing field 'caption'"),
    ([{"caption": "a cat"}], 0, "missing field 'image'"),
    ([{"image": "a.jpg", "caption": 5}], 0, "'caption' must be a string or a non-empty list"),
    ([{"image": "a.jpg", "caption": ["ok", 3]}], 0, "caption 1 is empty or not a string"),
    ([{"image": "a.jpg", "caption": "a"}, {"image": "b.jpg", "caption": "   "}], 1, "caption 0 is empty"),
    ([{"image": "a.jpg", "caption": ["x"]}, {"image": "b.jpg", "caption": []}], 1, "non-empty list"),
    ([{"image": "a.jpg", "caption": ["x"]}, {"image": "a.jpg", "caption": ["y"]}], 1, "duplicate image 'a.jpg'"),
    ([{"image": "", "caption": "x"}], 0, "'image' must be a non-empty string"),
    ([{"image": 3, "caption": "x"}], 0, "'image' must be a non-empty string"),
    ([["a.jpg", "x"]], 0, "expected a JSON object"),
])
def test_read_caption_file_errors_name_file_and_record(tmp_path, records, record, message):
    p = write_json(tmp_path / "caps.json", records)
    with pytest.raises(RecordError) as e:
        read_caption_file(p)
    assert str(p) in str(e.value)
    assert f"record {record}" in str(e.value)
    assert message in str(e.value)


@pytest.mark.parametrize("bad", [{"image": "b.jpg"}, {"image": "b.jpg", "caption": 5}])
def test_read_caption_file_per_caption_layout_blames_the_bad_record(tmp_path, bad):
    p = write_json(tmp_path / "train.json", [{"image": "a.jpg", "caption": "a cat"},
                                             {"image": "a.jpg", "caption": "the cat"}, bad])
    with pytest.raises(RecordError, match="record 2"):
        read_caption_file(p)


def test_read_caption_file_truncated_json(tmp_path):
    p = tmp_path / "caps.json"
    p.write_text(json.dumps([{"image": "a.jpg", "caption": "x"}])[:-5])
    with pytest.raises(RecordError, match=r"caps\.json.*not valid JSON"):
        read_caption_file(p)


@pytest.mark.parametrize("data", [[], {}, {"image": "a.jpg", "caption": "x"}])
def test_read_caption_file_empty_list_or_not_a_list(tmp_path, data):
    p = write_json(tmp_path / "caps.json", data)
    with pytest.raises(RecordError, match=r"caps\.json.*non-empty JSON list"):
        read_caption_file(p)


def test_read_caption_file_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent.json"):
        read_caption_file(tmp_path / "absent.json")


# ----------------------------------------------------------------------------------------------- index


@pytest.fixture
def data(tmp_path) -> Path:
    """A per-caption train file over 2 images, a per-image val file over 1, one image folder."""
    root = tmp_path / "data"
    save(root / "images" / "train" / "a.jpg", solid(12, 8, RED))
    save(root / "images" / "train" / "b.jpg", solid(8, 12, GREEN))
    save(root / "images" / "val" / "c.jpg", solid(10, 10, BLUE))
    write_json(root / "train.json", [{"image": "train/b.jpg", "caption": "a green thing "},
                                     {"image": "train/a.jpg", "caption": "a red thing"},
                                     {"image": "train/b.jpg", "caption": "green again"}])
    write_json(root / "val.json", [{"image": "val/c.jpg", "caption": ["a blue thing", "blue"]}])
    return root


def world_params(prefix: str) -> dict:
    return {"image_size": 4, "splits": {
        "tr": {"annotations": f"{prefix}/train.json", "images": f"{prefix}/images", "description": "train part"},
        "va": {"annotations": f"{prefix}/val.json", "images": f"{prefix}/images"}}}


def test_index_world_writes_captions_and_index(data, tmp_path, monkeypatch):
    monkeypatch.setenv("VLCOMP_TEST_DATA", str(data))
    out = tmp_path / "world"
    summary = index_world(world_params("$VLCOMP_TEST_DATA"), out)
    assert summary == {"tr": {"n_images": 2, "n_captions": 3}, "va": {"n_images": 1, "n_captions": 2}}
    caps = json.loads((out / "tr" / "captions.json").read_text())
    assert caps == [{"image": "train/b.jpg", "caption": ["a green thing", "green again"]},
                    {"image": "train/a.jpg", "caption": ["a red thing"]}]
    index = json.loads((out / "tr" / "index.json").read_text())
    assert index["format"] == INDEX_FORMAT
    assert index["image_root"] == str((data / "images").resolve())
    assert index["images"] == ["train/b.jpg", "train/a.jpg"]
    assert index["image_size"] == 4
    assert index["annotations"] == str((data / "train.json").resolve())
    assert index["annotations_sha256"] == hashlib.sha256((data / "train.json").read_bytes()).hexdigest()
    assert index["description"] == "train part"
    va = json.loads((out / "va" / "index.json").read_text())
    assert va["images"] == ["val/c.jpg"] and va["description"] == ""


def test_sha256_file_small_chunks(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(bytes(range(256)) * 7)
    assert sha256_file(p, chunk=100) == hashlib.sha256(p.read_bytes()).hexdigest()


def test_index_split_missing_image_names_folder_and_image(data, tmp_path):
    (data / "images" / "train" / "a.jpg").unlink()
    spec = PaperSplitSpec(str(data / "train.json"), str(data / "images"))
    with pytest.raises(FileNotFoundError) as e:
        index_split("tr", spec, 4, tmp_path / "world")
    msg = str(e.value)
    assert str(data / "images") in msg and "train/a.jpg" in msg and "1 of 2" in msg
    assert not (tmp_path / "world" / "tr").exists()  # nothing written


def test_index_split_missing_image_folder(data, tmp_path):
    spec = PaperSplitSpec(str(data / "train.json"), str(data / "no_images"))
    with pytest.raises(FileNotFoundError, match=r"no_images.*world\.splits\.tr\.images"):
        index_split("tr", spec, 4, tmp_path / "world")


def test_real_world_configs_expands_vars_and_home(monkeypatch, tmp_path):
    monkeypatch.setenv("VLCOMP_TEST_DATA", "/some/where")
    monkeypatch.setenv("HOME", str(tmp_path))
    cfg, specs = real_world_configs({"image_size": 32, "splits": {
        "a": {"annotations": "$VLCOMP_TEST_DATA/a.json", "images": "${VLCOMP_TEST_DATA}/imgs"},
        "b": {"annotations": "~/b.json", "images": "~/imgs", "description": "bee"}}})
    assert cfg.image_size == 32
    assert specs == {"a": PaperSplitSpec("/some/where/a.json", "/some/where/imgs", ""),
                     "b": PaperSplitSpec(f"{tmp_path}/b.json", f"{tmp_path}/imgs", "bee")}


def test_real_world_configs_default_image_size():
    cfg, _ = real_world_configs({"splits": {"a": {"annotations": "a.json", "images": "i"}}})
    assert cfg.image_size == 224


@pytest.mark.parametrize("world,message", [
    ({"splits": {"tr": {"annotations": "a.json", "images": "i", "extra": 1}}}, r"world\.splits\.tr\.extra"),
    ({"splits": {"tr": {"annotations": "a.json"}}}, r"world\.splits\.tr\.images"),
    ({"splits": {"tr": "a.json"}}, r"world\.splits\.tr must be a mapping"),
    ({"splits": {}}, r"world\.splits is missing or empty"),
    ({}, r"world\.splits is missing or empty"),
    ({"image_size": 0, "splits": {"tr": {"annotations": "a", "images": "i"}}}, r"image_size"),
    ({"image_size": True, "splits": {"tr": {"annotations": "a", "images": "i"}}}, r"image_size"),
    ({"image_sizes": 3, "splits": {"tr": {"annotations": "a", "images": "i"}}}, r"world\.image_sizes"),
])
def test_real_world_configs_errors(world, message):
    with pytest.raises(ValueError, match=message):
        real_world_configs(world)


# ----------------------------------------------------------------------------------------------- Split


@pytest.fixture
def indexed(data, tmp_path) -> Path:
    out = tmp_path / "world"
    index_world(world_params(str(data)), out)
    return out


def test_split_on_an_indexed_split(indexed, data):
    split = Split(indexed, "tr")
    assert split.is_indexed
    images = split.images
    assert isinstance(images, ImageFiles)
    assert len(images) == 2 and images.shape == (2, 4, 4, 3)
    assert split.images is images  # read once
    got = images[np.array([1, 0])]
    assert got.shape == (2, 4, 4, 3) and got.dtype == np.uint8
    assert (got[0] == np.array(RED, dtype=np.uint8)).all()  # image 1 = train/a.jpg
    assert (got[1] == np.array(GREEN, dtype=np.uint8)).all()
    assert split.captions() == [["a green thing", "green again"], ["a red thing"]]
    assert split.twins() == []
    with pytest.raises(ValueError, match="real profile"):
        split.scenes()


def test_split_index_missing_field(indexed):
    p = indexed / "tr" / "index.json"
    index = json.loads(p.read_text())
    del index["image_size"]
    p.write_text(json.dumps(index))
    with pytest.raises(ValueError, match=r"index\.json.*'image_size'"):
        _ = Split(indexed, "tr").images


def test_split_toy_split_is_not_indexed(tmp_path):
    d = tmp_path / "w" / "toy"
    d.mkdir(parents=True)
    arr = np.zeros((2, 4, 4, 3), dtype=np.uint8)
    np.save(d / "images.npy", arr)
    split = Split(tmp_path / "w", "toy")
    assert not split.is_indexed
    assert isinstance(split.images, np.ndarray) and split.images.shape == (2, 4, 4, 3)

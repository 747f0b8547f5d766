"""scripts/snapshot_first_world.py: the first world's per-kind VG-R rows come from its item tables through the DVC
cache (md5-checked) and the benchmark's own aggregate, checked against the stored VG-R macro; the committed snapshot
holds the first world's ledgers and every run the reports read."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

from vlcomp.benchmarks.aro import aggregate_vg_relation
from vlcomp.reporting.tree import Chain

REPO = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("snapshot_first_world", REPO / "scripts" / "snapshot_first_world.py")
S = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(S)

RELATIONS = ["above"] * 4 + ["pointing at"] * 3 + ["next to"] * 2


def _table() -> pd.DataFrame:
    return pd.DataFrame({"index": range(9), "relation": RELATIONS,
                         "correct": [True, False, True, True, False, True, False, True, True],
                         "excluded": [r == "next to" for r in RELATIONS], "tie": False,
                         "wrong_correct": [True, True, False, False, True, False, False, False, True],
                         "text_cosine": 0.9})


def _cache(root: Path, files: dict[str, bytes]) -> str:
    """A DVC cache holding ``files`` as one directory output; returns the directory's md5 (``.dir``)."""
    entries = []
    for name, data in files.items():
        md5 = hashlib.md5(data).hexdigest()
        S.cache_path(root, md5).parent.mkdir(parents=True, exist_ok=True)
        S.cache_path(root, md5).write_bytes(data)
        entries.append({"md5": md5, "relpath": name})
    listing = json.dumps(entries).encode()
    md5 = hashlib.md5(listing).hexdigest() + ".dir"
    S.cache_path(root, md5).parent.mkdir(parents=True, exist_ok=True)
    S.cache_path(root, md5).write_bytes(listing)
    return md5


def test_item_table_comes_through_the_cache_and_is_md5_checked(tmp_path):
    parquet = tmp_path / "t.parquet"
    _table().to_parquet(parquet, index=False)
    md5 = _cache(tmp_path / "cache", {"vg_relation.parquet": parquet.read_bytes()})
    pd.testing.assert_frame_equal(S.item_table(tmp_path / "cache", md5, "vg_relation.parquet"), _table())
    with pytest.raises(ValueError, match="has no vg_attribution.parquet"):
        S.item_table(tmp_path / "cache", md5, "vg_attribution.parquet")
    listing = json.loads(S.read_cached(tmp_path / "cache", md5))
    S.cache_path(tmp_path / "cache", listing[0]["md5"]).write_bytes(b"changed")
    with pytest.raises(ValueError, match="does not match its md5"):
        S.item_table(tmp_path / "cache", md5, "vg_relation.parquet")


def test_out_md5s_reads_every_lock():
    lock = ("schema: '2.0'\nstages:\n  evaluate@m:\n    cmd: x\n    outs:\n    - path: metrics/m/items\n"
            "      hash: md5\n      md5: abc.dir\n    - path: metrics/m/metrics.json\n      md5: def\n")
    assert S.out_md5s([lock, "schema: '2.0'\n"]) == {"metrics/m/items": "abc.dir", "metrics/m/metrics.json": "def"}


def test_run_rows_derive_the_kind_split_and_check_the_stored_macro():
    df = _table()
    metrics = {k: v for k, v in aggregate_vg_relation({"vg_relation": df}).items()
               if "geometric" not in k and "role" not in k}  # a first-world metrics file: no per-kind keys
    metrics["ccneg/acc"] = 0.6
    rows = pd.DataFrame(S.run_rows("clip-b0", Chain("clip", "b0", "0", ""), metrics, df)).set_index("key")
    # by hand: geometric = above 3/4; role = pointing at 1/3; wrong image: 2/4 and 1/3; next to excluded
    assert rows.loc["aro/vg_relation/geometric_macro_acc", "value"] == pytest.approx(3 / 4)
    assert rows.loc["aro/vg_relation/role_macro_acc", "value"] == pytest.approx(1 / 3)
    assert rows.loc["aro/vg_relation/geometric_wrong_image_macro_acc", "value"] == pytest.approx(2 / 4)
    assert rows.loc["aro/vg_relation/role_wrong_image_macro_acc", "value"] == pytest.approx(1 / 3)
    assert rows.loc["aro/vg_relation/role_n_cases", "value"] == 3
    assert rows.loc["aro/vg_relation/role_macro_acc", "source"] == "items"
    assert rows.loc["ccneg/acc", "source"] == "metrics.json" and "zeroshot/cifar10/acc" not in rows.index
    assert set(rows["model"]) == {"clip-b0"} and set(rows["base_seed"]) == {"0"}
    metrics["aro/vg_relation/macro_acc"] += 0.01
    with pytest.raises(ValueError, match="VG-R macro from the item table"):
        S.run_rows("clip-b0", Chain("clip", "b0", "0", ""), metrics, df)


def test_the_committed_snapshot_has_every_run_and_key_the_reports_read():
    folder = REPO / "calibration" / "first_world"
    if not (folder / "summary.csv").exists():
        pytest.skip("no snapshot in this checkout")
    df = pd.read_csv(folder / "summary.csv", dtype={"base_seed": str, "seed": str}, keep_default_na=False)
    assert list(df.columns) == list(S.COLUMNS) and sorted(set(df["model"])) == sorted(S.RUNS)
    for run, g in df.groupby("model"):
        assert set(S.KIND_KEYS) <= set(g["key"]), run
        assert set(g.loc[g["source"] == "items", "key"]) == set(S.KIND_KEYS), run
    assert {"claims_aro.csv", "claims_tsvlc.csv", "params.yaml"} <= {p.name for p in folder.iterdir()}

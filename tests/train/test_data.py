"""BatchSampler layouts (plain, negatives, hard images, K negatives with masks, positives), drop_last,
determinism, errors; rows_from_annotations. Most layout tests read a batch flat (image rows, then every text in
block order): the NegCLIP fork's ``[I; I']`` / ``[T; T'; T-; T'-]``."""

from __future__ import annotations

import numpy as np
import pytest

from vlcomp.train.batch import PAD
from vlcomp.train.data import Batch, BatchSampler, Row, rows_from_annotations

N_IMAGES, CAPS, NEGS, K = 8, 2, 3, 3


def _rows(n_images: int = N_IMAGES, caps: int = CAPS, negs: int = NEGS) -> list[Row]:
    return [Row(i, f"cap {i}.{j}", tuple(f"neg {i}.{j}.{k}" for k in range(negs)))
            for i in range(n_images) for j in range(caps)]


def _hard(n_images: int = N_IMAGES, k: int = K) -> np.ndarray:
    return np.asarray([[(i + d) % n_images for d in range(1, k + 1)] for i in range(n_images)])  # int [n, K]


ROWS = _rows()
BY_CAPTION = {r.caption: r for r in ROWS}


class Flat:
    """A batch read flat: ``images`` = every image row, ``texts`` = every text in block order."""

    def __init__(self, batch: Batch) -> None:
        self.batch, self.images, self.texts = batch, batch.image_rows(), batch.all_texts()


def _epoch(sampler: BatchSampler, seed: int = 0) -> list[Flat]:
    return [Flat(b) for b in sampler.epoch(np.random.default_rng(seed))]


def _check_positives(batch: Flat, n: int) -> None:
    """The first n texts are true captions of the n images, aligned by index."""
    for i in range(n):
        assert BY_CAPTION[batch.texts[i]].image == int(batch.images[i]), (i, batch.texts[i], batch.images[i])


# ----------------------------------------------------------------------------------------------- layouts


def test_plain_layout(rng: np.random.Generator) -> None:
    b = 4
    for batch in map(Flat, BatchSampler(ROWS, b).epoch(rng)):
        assert list(batch.batch.images) == ["images"] and list(batch.batch.texts) == ["captions"]
        assert batch.images.shape == (b,) and np.issubdtype(batch.images.dtype, np.integer)
        assert len(batch.texts) == b
        _check_positives(batch, b)


def test_negatives_layout() -> None:
    b = 4
    for batch in _epoch(BatchSampler(ROWS, b, negatives=1)):
        assert batch.images.shape == (b,) and len(batch.texts) == 2 * b
        _check_positives(batch, b)
        assert list(batch.batch.texts) == ["captions", "negatives"]
        negs = batch.batch.texts["negatives"]
        assert negs.width == 1 and negs.mask is None and list(negs.owner) == list(range(b))
        for i in range(b):  # texts [T; T-]: T-[i] is drawn from row i's own list
            assert batch.texts[b + i] in BY_CAPTION[batch.texts[i]].negatives


def test_hard_images_layout() -> None:
    b, hard = 4, _hard()
    batches = _epoch(BatchSampler(ROWS, b, negatives=1, hard_images=hard))
    assert len(batches) == len(ROWS) // b
    for batch in batches:
        assert batch.images.shape == (2 * b,) and len(batch.texts) == 4 * b  # images [I; I'], texts [T; T'; T-; T'-]
        assert list(batch.batch.images) == ["images", "hard_images"]
        assert list(batch.batch.texts["captions"].owner) == list(range(2 * b))
        _check_positives(batch, 2 * b)  # T[i] belongs to I[i] and T'[i] to I'[i]
        for i in range(b):
            img, nn_img = int(batch.images[i]), int(batch.images[b + i])
            assert nn_img in hard[img], "I'[i] is one of I[i]'s K neighbours"
            assert batch.texts[2 * b + i] in BY_CAPTION[batch.texts[i]].negatives
            assert batch.texts[3 * b + i] in BY_CAPTION[batch.texts[b + i]].negatives


def test_hard_images_without_negatives() -> None:
    b, hard = 3, _hard()
    for batch in _epoch(BatchSampler(ROWS, b, hard_images=hard)):
        assert batch.images.shape == (2 * b,) and len(batch.texts) == 2 * b
        _check_positives(batch, 2 * b)
        for i in range(b):
            assert int(batch.images[b + i]) in hard[int(batch.images[i])]


def test_every_neighbour_and_negative_gets_drawn() -> None:
    """Over epochs each of the K neighbours and each negative appears (uniform choice, not always the first)."""
    hard = _hard()
    sampler = BatchSampler(ROWS, 4, negatives=1, hard_images=hard)
    rng = np.random.default_rng(0)
    nn_seen: dict[int, set[int]] = {}
    neg_seen: dict[str, set[str]] = {}
    for _ in range(30):
        for batch in map(Flat, sampler.epoch(rng)):
            for i in range(4):
                nn_seen.setdefault(int(batch.images[i]), set()).add(int(batch.images[4 + i]))
                neg_seen.setdefault(batch.texts[i], set()).add(batch.texts[8 + i])
    assert all(nn_seen[i] == set(hard[i]) for i in range(N_IMAGES))
    assert all(neg_seen[r.caption] == set(r.negatives) for r in ROWS)


def test_neighbour_without_rows_falls_back_to_one_with_rows() -> None:
    rows = [r for r in ROWS if r.image != 1]  # image 1 has no training row: it cannot bring a caption
    hard = _hard()
    sampler = BatchSampler(rows, 2, hard_images=hard)
    seen = set()
    for seed in range(20):
        for batch in _epoch(sampler, seed):
            for i in range(2):
                img, nn_img = int(batch.images[i]), int(batch.images[2 + i])
                assert nn_img != 1 and nn_img in hard[img]
                seen.add(img)
    assert 0 in seen  # image 0 has neighbours (1, 2, 3): only 2 and 3 can be drawn


def test_image_whose_neighbours_all_lack_rows_brings_itself() -> None:
    rows = [Row(0, "a", ("na",)), Row(1, "b", ("nb",)), Row(2, "c", ("nc",))]
    hard = np.asarray([[3], [2], [1], [0]])  # image 3 has no row
    batches = [Flat(b) for b in BatchSampler(rows, 3, hard_images=hard).epoch(np.random.default_rng(0))]
    (batch,) = batches
    pos = list(batch.images[:3]).index(0)
    assert int(batch.images[3 + pos]) == 0 and batch.texts[3 + pos] == "a"


def test_k_negatives_without_replacement_and_masked_when_a_row_has_fewer() -> None:
    rows = [Row(i, f"cap {i}", tuple(f"neg {i}.{k}" for k in range(1 + i % 3))) for i in range(12)]  # 1-3 each
    sampler = BatchSampler(rows, 6, negatives=2)
    for batch in sampler.epoch(np.random.default_rng(1)):
        block = batch.texts["negatives"]
        assert block.width == 2 and block.rows == 6 and len(block.texts) == 12
        for r in range(6):
            row = rows[int(batch.images["images"][r])]
            got = block.texts[2 * r : 2 * r + 2]
            valid = [True, True] if block.mask is None else list(block.mask[r])
            assert valid == [True, len(row.negatives) >= 2]
            assert all(t in row.negatives for t, v in zip(got, valid, strict=True) if v)
            assert all(t == PAD for t, v in zip(got, valid, strict=True) if not v)
            if all(valid):
                assert got[0] != got[1]  # without replacement
    assert PAD in sampler.texts()


def test_positives_block_with_hard_images_covers_both_row_sets() -> None:
    rows = [Row(r.image, r.caption, r.negatives, (f"pos {r.caption}",)) for r in ROWS]
    by_caption = {r.caption: r for r in rows}
    for batch in BatchSampler(rows, 4, negatives=1, positives=1, hard_images=_hard()).epoch(np.random.default_rng(0)):
        assert list(batch.texts) == ["captions", "negatives", "positives"]
        caps, pos = batch.texts["captions"].texts, batch.texts["positives"]
        assert pos.rows == 8 and list(pos.owner) == list(range(8))
        assert pos.texts == [by_caption[c].positives[0] for c in caps]


def test_missing_positives_is_an_error() -> None:
    with pytest.raises(ValueError, match="positives=1 but row 0 .* has no positive"):
        BatchSampler(ROWS, 4, positives=1)


@pytest.mark.parametrize("k", [-1, True, 1.5])
def test_bad_counts_are_named(k) -> None:
    with pytest.raises(ValueError, match=r"negatives=.*must be an int >= 0"):
        BatchSampler(ROWS, 4, negatives=k)


def test_shard_cuts_every_block_and_keeps_global_owners() -> None:
    (batch, *_) = BatchSampler(ROWS, 4, negatives=1, hard_images=_hard()).epoch(np.random.default_rng(0))
    s0, s1 = batch.shard(0, 2), batch.shard(1, 2)
    for name in batch.images:
        assert list(s0.images[name]) + list(s1.images[name]) == list(batch.images[name])
    for name, block in batch.texts.items():
        assert s0.texts[name].texts + s1.texts[name].texts == block.texts
        assert list(s0.texts[name].owner) + list(s1.texts[name].owner) == list(block.owner)
    assert batch.shard(0, 1) is batch
    with pytest.raises(ValueError, match="image block 'images': 4 rows cannot be split evenly over 3 processes"):
        batch.shard(0, 3)


# ---------------------------------------------------------------------------------------- epochs and seeds


def test_drop_last_and_each_row_at_most_once_per_epoch() -> None:
    rows = _rows(n_images=5)  # 10 rows
    sampler = BatchSampler(rows, 3)
    assert sampler.steps_per_epoch == 3
    batches = _epoch(sampler)
    assert len(batches) == 3
    used = [t for batch in batches for t in batch.texts]
    assert len(used) == 9 and len(set(used)) == 9


def test_same_seed_same_batches_and_different_seeds_differ() -> None:
    sampler = BatchSampler(ROWS, 4, negatives=1, hard_images=_hard())

    def flat(batches: list[Flat]) -> list:
        return [(b.images.tolist(), b.texts) for b in batches]

    assert flat(_epoch(sampler, 5)) == flat(_epoch(sampler, 5))
    assert flat(_epoch(sampler, 5)) != flat(_epoch(sampler, 6))
    rng = np.random.default_rng(5)  # successive epochs from one generator reshuffle
    assert flat([Flat(b) for b in sampler.epoch(rng)]) != flat([Flat(b) for b in sampler.epoch(rng)])


# ---------------------------------------------------------------------------------------------- errors


def test_batch_larger_than_the_data_is_an_error() -> None:
    with pytest.raises(ValueError, match="16 training rows is fewer than one batch of 17"):
        BatchSampler(ROWS, 17)
    assert BatchSampler(ROWS, 16).steps_per_epoch == 1


def test_batch_of_one_is_an_error() -> None:
    with pytest.raises(ValueError, match="batch_size=1: must be at least 2"):
        BatchSampler(ROWS, 1)


def test_missing_negatives_is_an_error() -> None:
    rows = [*ROWS[:-1], Row(7, "lonely")]
    with pytest.raises(ValueError, match="negatives=1 but row 15 \\(image 7, caption 'lonely'\\) has no negative"):
        BatchSampler(rows, 4, negatives=1)
    BatchSampler(rows, 4)  # fine without negatives


# -------------------------------------------------------------------------------------------------- rows


def test_rows_from_annotations() -> None:
    caps = [["a0", "a1"], ["b0"]]
    negs = [[["na0"], []], [["nb0", "nb1"]]]
    assert rows_from_annotations(caps) == [Row(0, "a0"), Row(0, "a1"), Row(1, "b0")]
    assert rows_from_annotations(caps, negs) == [Row(0, "a0", ("na0",)), Row(0, "a1", ()),
                                                 Row(1, "b0", ("nb0", "nb1"))]
    assert rows_from_annotations(caps, negs, require_negative=True) == [Row(0, "a0", ("na0",)),
                                                                        Row(1, "b0", ("nb0", "nb1"))]


def test_grouped_rows_stay_adjacent_and_each_row_is_seen_once() -> None:
    rows = rows_from_annotations([[f"c{i}"] for i in range(20)])
    together = [[0, 1], [4, 5], [10, 11], [18, 19]]
    sampler = BatchSampler(rows, 20, together=together)
    for seed in range(10):
        (batch,) = _epoch(sampler, seed)
        order = batch.images.tolist()
        assert sorted(order) == list(range(20))
        for i, j in together:
            assert abs(order.index(i) - order.index(j)) == 1


def test_no_groups_keeps_the_plain_shuffle() -> None:
    rows = rows_from_annotations([[f"c{i}", f"d{i}"] for i in range(30)])
    a = [b.images.tolist() for b in _epoch(BatchSampler(rows, 8), 3)]
    b = [b.images.tolist() for b in _epoch(BatchSampler(rows, 8, together=()), 3)]
    assert a == b


def test_overlapping_groups_are_rejected() -> None:
    rows = rows_from_annotations([[f"c{i}"] for i in range(6)])
    with pytest.raises(ValueError, match="shares an image"):
        BatchSampler(rows, 2, together=[[0, 1], [1, 2]])


def test_missing_mask_gives_masked_slots_and_draws_nothing_for_them():
    rows = [Row(0, "a", ("a-",), ("a+",)), Row(1, "b", (), ()), Row(2, "c", ("c-", "c--"), ()), Row(3, "d", (), ("d+",))]
    with pytest.raises(ValueError, match="has no negative"):
        BatchSampler(rows, 4, negatives=1)
    sampler = BatchSampler(rows, 4, negatives=1, positives=1, missing="mask")
    assert "" in sampler.texts()  # PAD is tokenised with the rest
    (batch,) = list(sampler.epoch(np.random.default_rng(0)))
    order = [int(i) for i in batch.images["images"]]
    neg, pos = batch.texts["negatives"], batch.texts["positives"]
    for r, img in enumerate(order):
        row = rows[img]
        assert bool(neg.mask[r, 0]) == bool(row.negatives)
        assert bool(pos.mask[r, 0]) == bool(row.positives)
        assert (neg.texts[r] in row.negatives) if row.negatives else neg.texts[r] == ""
        assert (pos.texts[r] in row.positives) if row.positives else pos.texts[r] == ""


def test_missing_mask_equals_error_mode_when_every_row_is_complete():
    a = _epoch(BatchSampler(ROWS, 4, negatives=1), seed=3)
    b = _epoch(BatchSampler(ROWS, 4, negatives=1, missing="mask"), seed=3)
    assert [(x.images.tolist(), x.texts) for x in a] == [(x.images.tolist(), x.texts) for x in b]
    assert all(x.batch.texts["negatives"].mask is None for x in b)


def test_missing_rule_is_validated():
    with pytest.raises(ValueError, match="missing='drop'"):
        BatchSampler(ROWS, 4, missing="drop")

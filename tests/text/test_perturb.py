"""ARO text perturbations: chunking rules, class-preserving shuffles, determinism and batch/naive parity."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from vlcomp.text.nlp import load_spacy, word_tokenize
from vlcomp.text.perturb import (
    ORDER_KINDS,
    PERTURBATIONS,
    Tagged,
    TextShuffler,
    get_perturbation,
    get_trigrams,
    order_options,
    retrieval_perturb,
    shuffle_all_words,
    shuffle_allbut_nouns_and_adj,
    shuffle_nouns_and_adj,
    shuffle_trigrams_tokens,
    shuffle_within_trigrams_tokens,
)
from vlcomp.text.preprocess import pre_caption

REAL_CAPTIONS = (
    Path(__file__).resolve().parents[2].parent / "shared" / "real_samples" / "coco_karpathy_test.json"
)

# ARO paper, Table 1
TABLE1 = "remarkable scene with a blue ball behind a green chair"
TABLE1_TAGGED = Tagged(
    tokens=tuple(TABLE1.split()),
    tags=("JJ", "NN", "IN", "DT", "JJ", "NN", "IN", "DT", "JJ", "NN"),
)
TABLE1_NOUN_ADJ = "green ball with a remarkable chair behind a blue scene"
TABLE1_ALLBUT = "remarkable scene behind a blue ball with a green chair"
TABLE1_WITHIN = "scene with remarkable a ball blue a green behind chair"
TABLE1_TRIGRAMS = "a green chair remarkable scene with a blue ball behind"

CAPTIONS = [
    "A black cat sitting on a wooden desk.",
    "Two dogs (brown) play in the snow near a red car.",
    "a man riding a wave on top of a surfboard",
    "A very small kitten; curious and fluffy!",
    "Pizza",
    "",
]


def _seeds(n: int = 1000) -> range:
    return range(n)


# --- trigram chunking --------------------------------------------------------------------------------------


def test_get_trigrams_left_aligned() -> None:
    assert get_trigrams(list("abcdefg")) == [["a", "b", "c"], ["d", "e", "f"], ["g"]]
    assert get_trigrams(list("abcdef")) == [["a", "b", "c"], ["d", "e", "f"]]
    assert get_trigrams(list("ab")) == [["a", "b"]]
    assert get_trigrams([]) == []


def test_within_trigrams_hand_computed() -> None:
    tokens = list("abcdefg")
    expected_rng = np.random.default_rng(7)
    p0, p1 = expected_rng.permutation(3), expected_rng.permutation(3)  # the 1-token chunk draws nothing
    expected = [tokens[0:3][k] for k in p0] + [tokens[3:6][k] for k in p1] + ["g"]
    assert shuffle_within_trigrams_tokens(tokens, np.random.default_rng(7)) == " ".join(expected)


def test_trigrams_hand_computed() -> None:
    tokens = list("abcdefg")
    chunks = [["a", "b", "c"], ["d", "e", "f"], ["g"]]
    order = np.random.default_rng(11).permutation(3)
    expected = " ".join(" ".join(chunks[k]) for k in order)
    assert shuffle_trigrams_tokens(tokens, np.random.default_rng(11)) == expected


@pytest.mark.parametrize("n_tokens", [1, 2, 3, 4, 7, 9, 11])
def test_within_trigrams_keeps_chunk_boundaries(n_tokens: int) -> None:
    tokens = [f"t{i}" for i in range(n_tokens)]
    for seed in _seeds(50):
        out = shuffle_within_trigrams_tokens(tokens, np.random.default_rng(seed)).split(" ")
        assert len(out) == n_tokens
        for start in range(0, n_tokens, 3):
            assert sorted(out[start : start + 3]) == sorted(tokens[start : start + 3])


@pytest.mark.parametrize("n_tokens", [1, 2, 3, 5, 9, 10])
def test_trigrams_keeps_each_chunk_intact(n_tokens: int) -> None:
    tokens = [f"t{i}" for i in range(n_tokens)]
    chunks = [tuple(c) for c in get_trigrams(tokens)]
    for seed in _seeds(50):
        out = shuffle_trigrams_tokens(tokens, np.random.default_rng(seed)).split(" ")
        assert Counter(out) == Counter(tokens)
        # read the output back chunk by chunk: every original chunk must appear contiguously
        pos, seen = 0, []
        while pos < len(out):
            match = [c for c in chunks if tuple(out[pos : pos + len(c)]) == c and c not in seen]
            assert match, f"seed {seed}: {out} is not a permutation of the chunks {chunks}"
            seen.append(match[0])
            pos += len(match[0])
        assert sorted(seen) == sorted(chunks)


def test_table1_trigram_examples_against_left_aligned_chunking() -> None:
    tokens = TABLE1.split()
    within = {shuffle_within_trigrams_tokens(tokens, np.random.default_rng(s)) for s in _seeds(2000)}
    assert TABLE1_WITHIN in within  # the paper's within-trigram example is reachable
    whole = {shuffle_trigrams_tokens(tokens, np.random.default_rng(s)) for s in _seeds(500)}
    assert len(whole) == 24  # 4 chunks -> 4! orders, all seen
    # catalog §2.3: the paper's "shuffle trigrams" example is not reproducible with left-aligned chunks
    assert TABLE1_TRIGRAMS not in whole


# --- noun / adjective shuffles on hand-tagged tokens ---------------------------------------------------------


def test_noun_adj_shuffle_keeps_others_and_permutes_within_class() -> None:
    tok, tags = TABLE1_TAGGED
    nouns = [i for i, t in enumerate(tags) if t.startswith("NN")]
    adjs = [i for i, t in enumerate(tags) if t.startswith("JJ")]
    others = [i for i in range(len(tok)) if i not in nouns + adjs]
    outs = set()
    for seed in _seeds():
        out = shuffle_nouns_and_adj(TABLE1_TAGGED, np.random.default_rng(seed)).split(" ")
        assert [out[i] for i in others] == [tok[i] for i in others]
        assert sorted(out[i] for i in nouns) == sorted(tok[i] for i in nouns)
        assert sorted(out[i] for i in adjs) == sorted(tok[i] for i in adjs)
        outs.add(" ".join(out))
    assert len(outs) == 36  # 3! noun orders x 3! adjective orders
    assert TABLE1_NOUN_ADJ in outs


def test_allbut_shuffle_keeps_nouns_and_adjectives_in_place() -> None:
    tok, tags = TABLE1_TAGGED
    fixed = [i for i, t in enumerate(tags) if t[:2] in ("NN", "JJ")]
    moving = [i for i in range(len(tok)) if i not in fixed]
    outs = set()
    for seed in _seeds():
        out = shuffle_allbut_nouns_and_adj(TABLE1_TAGGED, np.random.default_rng(seed)).split(" ")
        assert [out[i] for i in fixed] == [tok[i] for i in fixed]
        assert sorted(out[i] for i in moving) == sorted(tok[i] for i in moving)
        outs.add(" ".join(out))
    assert len(outs) == 12  # 4!/2! (two identical "a")
    assert TABLE1_ALLBUT in outs


def test_noun_adj_shuffle_hand_computed_draw_order() -> None:
    rng = np.random.default_rng(5)
    pn, pa = rng.permutation(3), rng.permutation(3)  # nouns first, then adjectives
    nouns, adjs = ["scene", "ball", "chair"], ["remarkable", "blue", "green"]
    n, a = [nouns[k] for k in pn], [adjs[k] for k in pa]
    expected = f"{a[0]} {n[0]} with a {a[1]} {n[1]} behind a {a[2]} {n[2]}"
    assert shuffle_nouns_and_adj(TABLE1_TAGGED, np.random.default_rng(5)) == expected


def test_single_noun_and_adjective_is_unchanged_and_draws_nothing() -> None:
    tagged = Tagged(("a", "red", "ball", "."), ("DT", "JJ", "NN", "."))
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert shuffle_nouns_and_adj(tagged, rng) == "a red ball ."
    assert rng.bit_generator.state == state


def test_shuffle_all_words_permutes_space_split_words() -> None:
    caption = "the grass is eating the horse"
    outs = {shuffle_all_words(caption, np.random.default_rng(s)) for s in _seeds(200)}
    for out in outs:
        assert Counter(out.split(" ")) == Counter(caption.split(" "))
    assert "eating the grass horse the is" in outs or len(outs) > 100  # many distinct orders


def test_registry_and_errors() -> None:
    assert set(PERTURBATIONS) == {
        "shuffle_nouns_and_adj",
        "shuffle_allbut_nouns_and_adj",
        "shuffle_within_trigrams",
        "shuffle_trigrams",
        "shuffle_all_words",
    }
    assert [PERTURBATIONS[k].needs_spacy for k in ORDER_KINDS] == [True, True, False, False]
    with pytest.raises(ValueError, match="shuffle_verbs"):
        get_perturbation("shuffle_verbs")
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        TextShuffler(nlp=object()).perturb_batch(["a b"], ["shuffle_trigrams"], 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"captions\[1\]"):
        TextShuffler().perturb_batch(["a", 3], ["shuffle_trigrams"], np.random.default_rng(0))  # type: ignore[list-item]
    with pytest.raises(ValueError, match="list of str"):
        TextShuffler().perturb_batch("a b c", ["shuffle_trigrams"], np.random.default_rng(0))
    with pytest.raises(ValueError, match="needs the spaCy parse"):
        PERTURBATIONS["shuffle_nouns_and_adj"]("a dog", None, np.random.default_rng(0))


def test_non_spacy_kinds_never_load_spacy() -> None:
    sh = TextShuffler(spacy_model="no_such_pipeline_xyz")
    out = sh.perturb_batch(CAPTIONS, ["shuffle_trigrams", "shuffle_all_words"], np.random.default_rng(0))
    assert len(out["shuffle_trigrams"]) == len(CAPTIONS)
    with pytest.raises(ValueError, match="no_such_pipeline_xyz"):
        sh.perturb_batch(CAPTIONS, ["shuffle_nouns_and_adj"], np.random.default_rng(0))


# --- spaCy-backed -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shuffler() -> TextShuffler:
    return TextShuffler(batch_size=4)


@pytest.mark.spacy
def test_table1_spacy_tag_classes(shuffler: TextShuffler) -> None:
    (tagged,) = shuffler.tag([TABLE1])
    nouns = [w for w, t in zip(*tagged, strict=True) if t in ("NN", "NNS", "NNP", "NNPS")]
    adjs = [w for w, t in zip(*tagged, strict=True) if t in ("JJ", "JJR", "JJS")]
    assert nouns == ["scene", "ball", "chair"]
    assert adjs == ["remarkable", "blue", "green"]
    assert tagged == TABLE1_TAGGED


@pytest.mark.spacy
def test_batch_is_deterministic_per_seed(shuffler: TextShuffler) -> None:
    kinds = list(PERTURBATIONS)
    a = shuffler.perturb_batch(CAPTIONS, kinds, np.random.default_rng(3))
    b = shuffler.perturb_batch(CAPTIONS, kinds, np.random.default_rng(3))
    c = shuffler.perturb_batch(CAPTIONS, kinds, np.random.default_rng(4))
    assert a == b
    assert a != c


@pytest.mark.spacy
def test_batch_equals_naive_loop_with_full_pipeline() -> None:
    # the reference way: the full pipeline, one nlp(caption) call per caption and per perturbation
    full = load_spacy(exclude=())
    kinds = list(PERTURBATIONS)
    rng = np.random.default_rng(123)
    naive: dict[str, list[str]] = {k: [] for k in kinds}
    for caption in CAPTIONS:
        for kind in kinds:
            p = PERTURBATIONS[kind]
            naive[kind].append(p(caption, Tagged.from_doc(full(caption)) if p.needs_spacy else None, rng))
    batched = TextShuffler(batch_size=2).perturb_batch(CAPTIONS, kinds, np.random.default_rng(123))
    assert batched == naive
    # the class's one-caption method (one nlp call per perturbation) agrees as well
    sh, rng = TextShuffler(), np.random.default_rng(123)
    one_by_one = {k: [] for k in kinds}
    for caption in CAPTIONS:
        for kind in kinds:
            one_by_one[kind].append(sh.perturb(caption, kind, rng))
    assert one_by_one == naive


@pytest.mark.spacy
def test_order_options_perturb_raw_then_clean(shuffler: TextShuffler) -> None:
    opts = order_options(CAPTIONS, np.random.default_rng(9), shuffler=shuffler)
    raw = shuffler.perturb_batch(CAPTIONS, ORDER_KINDS, np.random.default_rng(9))
    assert len(opts) == len(CAPTIONS)
    for i, caption in enumerate(CAPTIONS):
        assert len(opts[i]) == 5
        assert opts[i][0] == pre_caption(caption)
        assert opts[i][1:] == [pre_caption(raw[k][i]) for k in ORDER_KINDS]
        assert all(pre_caption(o) == o for o in opts[i])


@pytest.mark.spacy
def test_retrieval_perturb_cleans_first(shuffler: TextShuffler) -> None:
    for kind in PERTURBATIONS:
        got = retrieval_perturb(CAPTIONS, kind, np.random.default_rng(2), shuffler=shuffler)
        cleaned = [pre_caption(c) for c in CAPTIONS]
        assert got == shuffler.perturb_batch(cleaned, [kind], np.random.default_rng(2))[kind]
    # shuffle_all_words after pre_caption permutes the cleaned words (no "." left to move around)
    out = retrieval_perturb(["The grass is eating the horse."], "shuffle_all_words", np.random.default_rng(0))
    assert sorted(out[0].split(" ")) == sorted("the grass is eating the horse".split(" "))


@pytest.mark.spacy
@pytest.mark.realdata
def test_order_options_on_real_captions(shuffler: TextShuffler) -> None:
    if not REAL_CAPTIONS.exists():
        pytest.skip(f"real COCO captions not found at {REAL_CAPTIONS}")
    records = json.loads(REAL_CAPTIONS.read_text())
    captions = [c for r in records for c in r["caption"]][:200]
    assert len(captions) == 200
    opts = order_options(captions, np.random.default_rng(0), shuffler=shuffler)
    tagged = shuffler.tag(captions)
    raw = shuffler.perturb_batch(captions, ORDER_KINDS, np.random.default_rng(0), tagged=tagged)
    for i, caption in enumerate(captions):
        assert len(opts[i]) == 5 and opts[i][0] == pre_caption(caption)
        assert all(o == pre_caption(o) and len(o.split(" ")) <= 30 for o in opts[i])
        toks = tagged[i].tokens
        for kind in ORDER_KINDS[:2]:  # spaCy shuffles: same token multiset, single-space joined
            assert Counter(raw[kind][i].split(" ")) == Counter(" ".join(toks).split(" "))
        for kind in ORDER_KINDS[2:]:
            assert Counter(raw[kind][i].split(" ")) == Counter(" ".join(word_tokenize(caption)).split(" "))
    # most options differ from the original (ties at index 0 are possible, but rare)
    changed = np.mean([[o != row[0] for o in row[1:]] for row in opts], axis=0)
    assert (changed > 0.8).all(), changed

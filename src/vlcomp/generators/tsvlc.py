"""TSVLC's text generators (Doveh et al., CVPR 2023, §3.1): one-word negatives by rules and by unmasking, analogy
positives, and the 50/50 mix of the two negative kinds. Each is a registered generator run once for every chain
(``mine@<name>``): TSVLC edits only the text of the corpus, with no model of the chain.

==================  ======  ==================================================================================
name                reads   writes
==================  ======  ==================================================================================
``tsvlc_rb``        none    ``negatives`` (+ ``negative_types``: ``rb/<list>``) by the word lists
                            (:mod:`vlcomp.text.tsvlc_rules`: the paper's lists, or the toy world's vocabulary)
``tsvlc_unmask``    mlm     ``negatives`` (+ ``negative_types``: ``unmask/<POS>``) by spaCy + fill-mask
                            (:mod:`vlcomp.text.unmask`) with the ``train_mlm`` stage's masked LM
``tsvlc_mix``       mlm     ``negatives`` (+ ``negative_types``): every slot a fair coin between the two above
``tsvlc_analogy``   none    ``positives``: toy, scene-graph-exact paraphrases; paper, a causal LM with the
                            reference's 4-shot prompt (:mod:`vlcomp.text.analogy`), or the positives the authors
                            released (``source: released``: :func:`vlcomp.formats.cc3m.read_released_positives`)
==================  ======  ==================================================================================

**Offline candidates stand for online draws.** The reference draws one negative per sample *online*, anew every
epoch (in the DataLoader workers). Here each caption gets up to ``candidates`` distinct negatives once, and the
sampler draws one of them uniformly at every visit (``batch.negatives: 1``), so repeated epochs see different
negatives, as online generation does; the per-sample coin of the reference's ``BothNegatives`` is drawn per slot
(:func:`mix_slots`). A caption with none (no list word, no candidate POS) has an empty list: its row trains the
contrastive term only (``batch.rows: all``), as in the reference, whose L_neg covers only samples with a negative.

**The world's relations.** The toy word lists' ``action`` entries and the paraphraser's relation phrases are the
relations of the world the split comes from (``WorldConfig.relations``). The stage sees the world's files, not its
params, so they are read off the split's scene graphs (:func:`relations_of_scenes`): the first world's, and the
support relations too when a scene shows one. A real-profile split (no scene graphs) gets the first world's.

Positives: one per caption when a paraphrase exists (the reference precomputed one per image); a caption without
gets none and its analogy term is masked, where the reference falls back to the caption itself (a text-to-itself
term; documented deviation).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import GENERATORS, Generator

if TYPE_CHECKING:
    from ..world import Split
    from ..world.concepts import Relation
    from ..world.scene import Scene

WORD_LISTS = ("toy", "paper")
ANALOGY_SOURCES = ("scene", "llm", "released")


@dataclass(frozen=True)
class TsvlcNegativesConfig:
    """``mine.tsvlc_rb`` / ``mine.tsvlc_unmask`` / ``mine.tsvlc_mix`` in params.yaml."""

    split: str
    candidates: int = 3  # negatives per caption; the sampler draws one per visit
    word_lists: str = "toy"  # RB lists: "toy" (the world's vocabulary) or "paper" (the reference's, catalog §3.3)
    pos: tuple[str, ...] = ("NOUN", "ADP", "ADJ", "VERB")  # unmasking: the POS a masked word may have
    top_k: int = 5  # unmasking: fills considered (the fill-mask pipeline's default, as the reference)
    batch_size: int = 64  # unmasking: masked captions per fill-mask call
    rb_share: float = 0.5  # tsvlc_mix only: P(a slot is rule-based); the reference's fair coin

    def __post_init__(self) -> None:
        if isinstance(self.candidates, bool) or not isinstance(self.candidates, int) or self.candidates < 1:
            raise ValueError(f"candidates={self.candidates!r}: must be an int >= 1")
        if self.word_lists not in WORD_LISTS:
            raise ValueError(f"word_lists={self.word_lists!r}: must be one of {WORD_LISTS}")
        if not 0 <= self.rb_share <= 1:
            raise ValueError(f"rb_share={self.rb_share!r}: must be a probability")


@dataclass(frozen=True)
class TsvlcAnalogyConfig:
    """``mine.tsvlc_analogy``: ``source`` scene (toy: exact paraphrases from the scene graph), llm (paper: the causal
    LM ``model``, a Hugging Face name or folder in the local cache; the reference used BLOOM) or released (paper:
    the authors' precomputed positives, one JSON per image in the folder ``positives``, ``$VAR`` expanded)."""

    split: str
    source: str = "scene"
    model: str | None = None
    positives: str | None = None
    max_new_tokens: int = 40
    batch_size: int = 8

    def __post_init__(self) -> None:
        if self.source not in ANALOGY_SOURCES:
            raise ValueError(f"source={self.source!r}: must be one of {ANALOGY_SOURCES}")
        if self.source == "llm" and not self.model:
            raise ValueError("model: source llm needs a causal LM name or folder")
        if self.source == "released" and not self.positives:
            raise ValueError("positives: source released needs the folder of the released positives "
                             "(CC3M_positives: one <image>.json per image)")


def relations_of_scenes(scenes: Iterable[Scene]) -> dict[str, Relation]:
    """The relation inventory of the world ``scenes`` come from, as ``WorldConfig.relations`` gives it: every
    relation (:data:`~vlcomp.world.concepts.ALL_RELATIONS`) when some scene shows a support relation (only a world
    with a positive ``support`` weight has one), else the first world's
    (:data:`~vlcomp.world.concepts.RELATIONS`)."""
    from ..world.concepts import ALL_RELATIONS, RELATIONS, SUPPORT_RELATIONS

    support = any(p in SUPPORT_RELATIONS for sc in scenes for _, p, _ in sc.relations)
    return dict(ALL_RELATIONS if support else RELATIONS)


def split_relations(split: Split) -> dict[str, Relation]:
    """:func:`relations_of_scenes` of a toy split's scene graphs; the first world's relations for a split without
    scene graphs (a real-profile index)."""
    from ..world.concepts import RELATIONS

    if split.is_indexed or not (split.dir / "scenes.jsonl").exists():
        return dict(RELATIONS)
    return relations_of_scenes(split.scenes())


def word_lists(name: str, relations: Mapping[str, Relation] | None = None) -> dict[str, tuple[str, ...]]:
    """The RB word lists ``name`` (``paper`` or ``toy``); the toy ``action`` list is ``relations`` (the world's;
    None: the first world's)."""
    from ..text.tsvlc_rules import PAPER_WORD_LISTS, toy_word_lists

    if name == "paper":
        return dict(PAPER_WORD_LISTS)
    return toy_word_lists() if relations is None else toy_word_lists(relations)


def mix_slots(n_captions: int, candidates: int, rb_share: float, rng: np.random.Generator) -> np.ndarray:
    """bool ``[n_captions, candidates]``: True where a slot is rule-based (one coin per slot, in caption order)."""
    return rng.random((n_captions, candidates)) < rb_share


def _flat(captions: list[list[str]]) -> list[str]:
    return [c for caps in captions for c in caps]


def _reshape(flat: list, captions: list[list[str]]) -> list[list]:
    out, k = [], 0
    for caps in captions:
        out.append(flat[k : k + len(caps)])
        k += len(caps)
    return out


def _dedupe(pairs: list[tuple[str, str]], caption: str) -> list[tuple[str, str]]:
    seen, out = {caption}, []
    for text, kind in pairs:
        if text not in seen:
            seen.add(text)
            out.append((text, kind))
    return out


def negatives_of(captions: list[str], cfg: TsvlcNegativesConfig, *, rb_share: float, seed: int, docs=None,
                 fill_mask=None, relations: Mapping[str, Relation] | None = None) -> list[list[tuple[str, str]]]:
    """Up to ``cfg.candidates`` distinct ``(negative, kind)`` per caption; ``rb_share`` 1: rule-based only, 0:
    unmasking only, else a coin per slot. RB draws, unmasking draws and coins use three seeded streams.
    ``relations``: the world's relation inventory for the toy lists (None: the first world's)."""
    from ..seeding import np_rng
    from ..text.tsvlc_rules import rb_negatives

    n = len(captions)
    rb_k = np.full(n, cfg.candidates) if rb_share >= 1 else np.zeros(n, int) if rb_share <= 0 else \
        mix_slots(n, cfg.candidates, rb_share, np_rng(seed, "tsvlc", "mix")).sum(axis=1)
    un_k = cfg.candidates - rb_k
    rb_rng = np_rng(seed, "tsvlc", "rb")
    lists = word_lists(cfg.word_lists, relations)
    rb = [rb_negatives(c, lists, rb_rng, int(k)) if k else [] for c, k in zip(captions, rb_k, strict=True)]
    un: list[list[tuple[str, str]]] = [[] for _ in captions]
    todo = [i for i in range(n) if un_k[i]]
    if todo:
        if fill_mask is None or docs is None:
            raise ValueError("unmasking negatives need the masked LM and the captions' parses")
        from ..text.unmask import UnmaskConfig, unmask_negatives

        ucfg = UnmaskConfig(pos=tuple(cfg.pos), top_k=cfg.top_k, batch_size=cfg.batch_size)
        got = _unmask_grouped([captions[i] for i in todo], [docs[i] for i in todo], [int(un_k[i]) for i in todo],
                              fill_mask, np_rng(seed, "tsvlc", "unmask"), ucfg, unmask_negatives)
        for i, g in zip(todo, got, strict=True):
            un[i] = g
    return [_dedupe([(t, f"rb/{k}") for t, k in r] + [(t, f"unmask/{k}") for t, k in u], c)
            for c, r, u in zip(captions, rb, un, strict=True)]


def _unmask_grouped(captions, docs, ks, fill_mask, rng, ucfg, unmask_negatives):
    """Unmasking negatives with a per-caption count: the captions grouped by count (in caption order inside a
    group), each group in one batched call."""
    out: list = [None] * len(captions)
    for k in sorted(set(ks)):
        idx = [i for i, kk in enumerate(ks) if kk == k]
        # engine "model": the fill-mask pipeline's own steps a batch at a time, the same output as the pipeline
        # (tested), 12.75x one call per caption against 3.53x through the pipeline's batching
        # (perf/results/bench_fill_mask.json: 25,010 real Karpathy captions)
        res = unmask_negatives([captions[i] for i in idx], [docs[i] for i in idx], fill_mask, rng, k=k, cfg=ucfg,
                               engine="model")
        for i, r in zip(idx, res, strict=True):
            out[i] = r
    return out


def _write_negatives(out_dir: Path, captions: list[list[str]], negs: list[list[tuple[str, str]]], name: str) -> dict:
    from ..io import write_json

    write_json(out_dir / "negatives.json", _reshape([[t for t, _ in n] for n in negs], captions))
    write_json(out_dir / "negative_types.json", _reshape([[k for _, k in n] for n in negs], captions))
    counts = np.asarray([len(n) for n in negs])
    kinds: dict[str, int] = {}
    for n in negs:
        for _, k in n:
            kinds[k] = kinds.get(k, 0) + 1
    total = max(1, int(counts.sum()))
    return {f"mine/{name}/n_captions": float(len(negs)),
            f"mine/{name}/captions_with_negative": float((counts > 0).sum()),
            f"mine/{name}/mean_negatives": float(counts.mean()) if len(counts) else 0.0,
            **{f"mine/{name}/share/{k.replace('/', '_')}": v / total for k, v in sorted(kinds.items())}}


def _run_negatives(name: str, rb_share: float | None):
    def run(cfg: TsvlcNegativesConfig, *, world, model, nlp, seed: int, out_dir, parsed=None) -> dict:
        from ..world import Split

        share = cfg.rb_share if rb_share is None else rb_share
        split = Split(world, cfg.split)
        captions = split.captions()
        flat = _flat(captions)
        docs = fill_mask = None
        if share < 1:
            from ..text.mlm import fill_mask_pipeline
            from ..text.parsed import parse_captions, read_parses

            docs = read_parses(parsed, nlp, flat) if parsed is not None else parse_captions(flat, nlp)
            mlm, tokenizer = model
            fill_mask = fill_mask_pipeline(mlm, tokenizer, top_k=cfg.top_k)
        relations = split_relations(split) if share > 0 and cfg.word_lists == "toy" else None
        negs = negatives_of(flat, cfg, rb_share=share, seed=seed, docs=docs, fill_mask=fill_mask, relations=relations)
        return _write_negatives(Path(out_dir), captions, negs, name)

    return run


def run_analogy(cfg: TsvlcAnalogyConfig, *, world, model, nlp, seed: int, out_dir, parsed=None) -> dict:
    from ..io import write_json
    from ..seeding import np_rng
    from ..world import Split

    split = Split(world, cfg.split)
    captions = split.captions()
    flat = _flat(captions)
    if cfg.source == "scene":
        from ..text.analogy import SceneParaphrases

        scenes = split.scenes()
        per_caption = [s for s, caps in zip(scenes, captions, strict=True) for _ in caps]
        paraphrases = SceneParaphrases(np_rng(seed, "tsvlc", "analogy"), relations=relations_of_scenes(scenes))
        positives = paraphrases(flat, per_caption)
    elif cfg.source == "released":
        from ..config import expand_path
        from ..formats.cc3m import read_released_positives

        per_image = read_released_positives(expand_path(cfg.positives, "positives"),
                                            [a["image"] for a in split.annotations()])
        positives = [p for p, caps in zip(per_image, captions, strict=True) for _ in caps]
    else:
        from ..text.analogy import LlmAnalogies, load_causal_lm

        lm, tokenizer = load_causal_lm(cfg.model)
        positives = LlmAnalogies(lm, tokenizer, max_new_tokens=cfg.max_new_tokens, batch_size=cfg.batch_size)(flat, None)
    write_json(Path(out_dir) / "positives.json", _reshape([[p] if p else [] for p in positives], captions))
    have = sum(p is not None for p in positives)
    return {"mine/tsvlc_analogy/n_captions": float(len(flat)),
            "mine/tsvlc_analogy/captions_with_positive": float(have),
            "mine/tsvlc_analogy/share_with_positive": have / max(1, len(flat))}


GENERATORS.add("tsvlc_rb", Generator(TsvlcNegativesConfig, _run_negatives("tsvlc_rb", 1.0),
                                     writes=("negatives", "negative_types"), reads="none"))
GENERATORS.add("tsvlc_unmask", Generator(TsvlcNegativesConfig, _run_negatives("tsvlc_unmask", 0.0),
                                         writes=("negatives", "negative_types"), reads="mlm"))
GENERATORS.add("tsvlc_mix", Generator(TsvlcNegativesConfig, _run_negatives("tsvlc_mix", None),
                                      writes=("negatives", "negative_types"), reads="mlm"))
GENERATORS.add("tsvlc_analogy", Generator(TsvlcAnalogyConfig, run_analogy, writes=("positives",), reads="none"))

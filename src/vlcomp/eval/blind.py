"""The blind-text ceiling (issue 27, item 6): a text-only reader that knows the world's scene-graph co-occurrence
counts and nothing else (no training, no image), scored on every choice benchmark by the one engine, like a model.

ARO's premise is that a model can do well on VG-Relation / VG-Attribution from a text prior alone, without looking
at the image. This reader measures how far such a prior goes in the toy world: what a benchmark leaves to be read off
the image is its accuracy above this ceiling.

**Counts** (:class:`SceneCounts`): the scene graphs of one training split (params ``blind.<name>.split``; the toy
default ``coco_train``, what NegCLIP and CLIP-FT fine-tune on): how many objects of each shape, how many of each
shape have each attribute value (colour, size, material, state), and how many relation records of each kind hold
between an ordered pair of shapes (every ``(subject, relation, object)`` of :attr:`vlcomp.world.scene.Scene.relations`;
a pair of objects may hold several, e.g. ``to the left of`` and ``next to``).

**Probabilities** (:class:`FactModel`), additively smoothed with ``alpha`` = params ``blind.<name>.smoothing`` (1:
add-one, Laplace) over the world's closed vocabularies, so an unseen fact has a small probability, never 0:

- ``P(shape) = (n_shape + alpha) / (n_objects + alpha * |shapes|)`` (the shapes the params' world can show: the
  COCO-twin ones, the web-only ones the params name, and the bar when the support layout is on, :func:`world_inventory`);
- ``P(value | shape) = (n_{shape, value} + alpha) / (n_shape + alpha * |values of the kind|)`` (10 colours,
  2 sizes, 3 materials, 2 states);
- ``P(relation | subject shape, object shape) = (n_{s, r, o} + alpha) / (n_{s, o} + alpha * |relations|)``
  (the relations the params' world can show, :attr:`vlcomp.world.scene.WorldConfig.relations`; ``n_{s, o}``: every
  relation record between the two shapes). The grammar reads every phrase any world has; the smoothing spreads over
  the world's own, so a world's ceiling does not move when a later world adds concepts.

A categorical distribution over relations given the two shapes, not one yes/no probability per relation: it is what
"which way round is this relation more plausible" needs (VG-R compares ``P(r | A, B)`` with ``P(r | B, A)``), and
the same caption's other facts (the two shapes) cancel out of that comparison.

**Score** (:meth:`FactModel.score`): a caption is read into facts by the closed grammar of
:mod:`vlcomp.text.facts` (noun phrases, relation phrases, synonyms, negation); its score is the sum of the
log-probabilities of the facts it states, plus ``log(1 - P(group))`` for each group of facts it denies (``P(group)``
the product of the group's probabilities: "there is no small circle" is as likely as "a small circle" is not).
Words the grammar cannot read contribute nothing, so two captions it reads the same **tie**, and every benchmark's
own tie rule decides (the engine also ties identical strings, :func:`vlcomp.eval.engine.tie_identical_options`;
VG-R / VG-A count a tie wrong, COCO-Order and CREPE count it right). The sum is taken with :func:`math.fsum` over
the facts in canonical order, so captions stating the same facts score the same float; the engine keeps scores as
float32 (differences below ~1e-6 of a log-probability would tie). Two consequences of a sum of log-probabilities,
reported with the numbers: a caption stating *fewer* facts scores higher (SugarCrepe's add-* negatives and the word
salads of the Order shuffles read fewer facts), and a denied fact is usually more likely than the same fact stated
(so the reader prefers negated captions on CC-Neg and CREPE-Negate, below chance when the true caption is the
affirmative one).

**As a scorer** (:class:`BlindTextScorer`): ``kind = "cross"`` with ``score_pairs(images, texts)`` = the texts'
scores, the images ignored, so the engine runs it like any cross-encoder: per-item tables saved, metrics derived
from them by each benchmark's own aggregate, the wrong-image control scored (and equal to the own-image score by
construction). Its tasks are handed to the engine with a loader that reads no image (:func:`without_images`). Not a
third engine kind: the engine's cross path already scores any function of an (image, caption) pair, batched, with
the same tie handling, and a new kind would change :mod:`vlcomp.eval.engine`, which every evaluation stage imports
(every model would be re-scored for numbers that cannot change).
Retrieval and zero-shot classification are no choice between captions and are skipped (:func:`choice_benchmarks`).
The outputs go to ``metrics/blind/<name>/`` (stage ``evaluate_blind@<name>``), beside the models' folders but not
among them: no report, ledger, seed spread or matrix column counts it as a model; the reports show it as one
reference row, ``blind-text ceiling (scene-graph counts, no image)`` (:mod:`vlcomp.reporting.blind`).
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from ..text.facts import (
    ATTRIBUTE,
    ATTRIBUTE_VALUES,
    RELATION,
    RELATION_PHRASES,
    SHAPE,
    SHAPE_WORDS,
    Fact,
    Reading,
    read_caption,
)
from ..world.concepts import support_shapes
from .engine import ChoiceTask, EngineOptions, Task, as_tasks, score_task

log = logging.getLogger(__name__)

#: The folder of the blind readers' outputs under the metrics tree (``metrics/blind/<name>/``): not a model folder.
BLIND_SUBDIR = "blind"
#: How reports label a blind reader's row.
BLIND_LABEL = "blind-text ceiling (scene-graph counts, no image)"


# --------------------------------------------------------------------------- params


@dataclass(frozen=True)
class BlindConfig:
    """``blind.<name>`` in params.yaml: the split whose scene graphs are counted and the additive smoothing."""

    split: str
    smoothing: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.split, str) or not self.split.strip():
            raise ValueError(f"split={self.split!r}: must name a world split (e.g. coco_train)")
        s = self.smoothing
        if isinstance(s, bool) or not isinstance(s, int | float) or not s > 0 or math.isinf(s):
            raise ValueError(f"smoothing={s!r}: must be a positive number (1: add-one)")


def blind_config(params: Mapping[str, Any], name: str) -> BlindConfig:
    """``blind.<name>`` of params, checked; a missing key is an error naming it (``params: missing key
    'blind.<name>'``)."""
    from ..config import build, section

    spec = section(dict(params), f"blind.{name}")
    if not isinstance(spec, Mapping):
        raise ValueError(f"params: blind.{name} must be a mapping (split, smoothing), got {spec!r}")
    return build(BlindConfig, dict(spec), f"blind.{name}")


# --------------------------------------------------------------------------- counts


@dataclass(frozen=True)
class SceneCounts:
    """Co-occurrence counts of a split's scene graphs (module docstring)."""

    split: str
    n_scenes: int
    shapes: Mapping[str, int]
    attributes: Mapping[tuple[str, str, str], int]  # (kind, value, shape) -> objects
    relations: Mapping[tuple[str, str, str], int]  # (relation, subject shape, object shape) -> relation records

    @classmethod
    def from_scenes(cls, scenes: Iterable[Any], split: str = "") -> SceneCounts:
        shapes: Counter = Counter()
        attributes: Counter = Counter()
        relations: Counter = Counter()
        n = 0
        for scene in scenes:
            n += 1
            for o in scene.objects:
                shapes[o.shape] += 1
                for kind, value in o.attributes().items():
                    attributes[(kind, value, o.shape)] += 1
            for s, rel, o in scene.relations:
                relations[(rel, scene.obj(s).shape, scene.obj(o).shape)] += 1
        if n == 0 or not shapes:
            raise ValueError(f"split {split!r}: no scene with an object to count")
        return cls(split, n, dict(shapes), dict(attributes), dict(relations))

    @classmethod
    def from_split(cls, world_dir: str | Path, split: str) -> SceneCounts:
        """The counts of ``<world_dir>/<split>/scenes.jsonl``; a missing split or file, a real-profile index or a
        malformed scene is an error naming the split and the file."""
        from ..world import Split

        where = Path(world_dir) / split / "scenes.jsonl"
        try:
            scenes = Split(world_dir, split).scenes()
        except FileNotFoundError as e:
            raise FileNotFoundError(f"blind-text counts: split {split!r}: {e}") from None
        except ValueError as e:
            raise ValueError(f"blind-text counts: split {split!r} ({where}): {e}") from None
        return cls.from_scenes(scenes, split)

    def summary(self) -> dict[str, Any]:
        """What was counted (provenance): scenes, objects, relation records."""
        return {"split": self.split, "n_scenes": self.n_scenes, "n_objects": int(sum(self.shapes.values())),
                "n_relations": int(sum(self.relations.values()))}


@dataclass
class FactModel:
    """Smoothed probabilities of facts under :class:`SceneCounts` (module docstring), and a reading's score."""

    counts: SceneCounts
    smoothing: float = 1.0
    shapes: tuple[str, ...] = SHAPE_WORDS
    """The shapes the world can show (what shape smoothing spreads over): :func:`world_inventory`."""
    relations: tuple[str, ...] = RELATION_PHRASES
    """The relations the world can show (what relation smoothing spreads over): :func:`world_inventory`."""
    _shape_total: int = field(init=False)
    _kind_total: dict[tuple[str, str], int] = field(init=False)
    _pair_total: dict[tuple[str, str], int] = field(init=False)

    def __post_init__(self) -> None:
        if isinstance(self.smoothing, bool) or not self.smoothing > 0:
            raise ValueError(f"smoothing={self.smoothing!r}: must be a positive number")
        self._shape_total = int(sum(self.counts.shapes.values()))
        self._kind_total = Counter()
        for (kind, _, shape), n in self.counts.attributes.items():
            self._kind_total[(kind, shape)] += n
        self._pair_total = Counter()
        for (_, s, o), n in self.counts.relations.items():
            self._pair_total[(s, o)] += n

    def probability(self, fact: Fact) -> float:
        a = self.smoothing
        if fact.kind == SHAPE:
            (shape,) = fact.key
            return (self.counts.shapes.get(shape, 0) + a) / (self._shape_total + a * len(self.shapes))
        if fact.kind == ATTRIBUTE:
            kind, value, shape = fact.key
            n = self.counts.attributes.get(fact.key, 0)
            return (n + a) / (self._kind_total.get((kind, shape), 0) + a * len(ATTRIBUTE_VALUES[kind]))
        if fact.kind == RELATION:
            _, s, o = fact.key
            n = self.counts.relations.get(fact.key, 0)
            return (n + a) / (self._pair_total.get((s, o), 0) + a * len(self.relations))
        raise ValueError(f"unknown fact kind {fact.kind!r}")

    def log_probability(self, fact: Fact) -> float:
        return math.log(self.probability(fact))

    def score(self, reading: Reading) -> float:
        """Sum of the stated facts' log-probabilities and of ``log(1 - P(group))`` per denied group; 0 for a
        reading with no fact."""
        terms = [self.log_probability(f) for f in reading.facts]
        terms += [math.log1p(-math.exp(math.fsum(self.log_probability(f) for f in group)))
                  for group in reading.negated]
        return math.fsum(terms)


# --------------------------------------------------------------------------- the scorer


class BlindTextScorer:
    """A text-only scorer behind the engine's cross-scorer contract: ``score_pairs`` ignores the images and gives
    each text its blind score (:meth:`FactModel.score` of :func:`vlcomp.text.facts.read_caption`), memoised per
    string. It has no image or text features (no dual view), so retrieval and zero-shot classification do not
    apply to it, and the VG text-swap cosine is NaN (left out of its metrics)."""

    kind = "cross"
    pair_batch = 8192

    def __init__(self, model: FactModel, name: str = "blind-text") -> None:
        self.name = name
        self.model = model
        self._scores: dict[str, float] = {}

    def text_score(self, text: str) -> float:
        if text not in self._scores:
            self._scores[text] = self.model.score(read_caption(text))
        return self._scores[text]

    def score_pairs(self, images: Sequence, texts: Sequence[str]) -> torch.Tensor:
        if len(images) != len(texts):
            raise ValueError(f"score_pairs: {len(images)} images but {len(texts)} texts")
        return torch.tensor([self.text_score(t) for t in texts], dtype=torch.float32)

    def encode_images(self, images: Sequence) -> torch.Tensor:
        raise ValueError(f"scorer {self.name!r} reads no image: it has no image features")

    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        raise ValueError(f"scorer {self.name!r} is a count reader: it has no text features")


def world_inventory(params: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(shapes, relations)`` the params' world can show: the web vocabulary's shapes (plus the bar when the
    support layout is on) and :attr:`vlcomp.world.scene.WorldConfig.relations`. The smoothing spreads over these,
    so the first world's ceiling does not move when a later world adds concepts."""
    from ..world import world_configs

    wcfg = world_configs(params)[0]
    relations = tuple(wcfg.relations)
    return wcfg.vocabulary(web=True)[0] + support_shapes(relations), relations


def blind_scorer(params: Mapping[str, Any], name: str, world_dir: str | Path) -> BlindTextScorer:
    """The blind reader ``blind.<name>`` of params over the world at ``world_dir``."""
    cfg = blind_config(params, name)
    counts = SceneCounts.from_split(world_dir, cfg.split)
    shapes, relations = world_inventory(params)
    return BlindTextScorer(FactModel(counts, cfg.smoothing, shapes, relations), name)


# --------------------------------------------------------------------------- running it


def _no_image(key: Hashable) -> None:
    return None


def without_images(task: Task) -> Task:
    """A choice task whose images are never read (the blind reader ignores them): same items, captions, controls
    and per-item tables."""
    if not isinstance(task, ChoiceTask):
        raise ValueError(f"{task.name}: the blind reader scores choice tasks only, not {type(task).__name__}")
    return replace(task, load_image=_no_image, image_file=None)


def choice_benchmarks(names: Sequence[str], inputs: Mapping[str, Any]
                      ) -> tuple[dict[str, list[ChoiceTask]], dict[str, str]]:
    """The benchmarks of ``names`` whose tasks are all choices between captions (prepared: ``{name: tasks}``), and
    the others with why they are skipped (retrieval, zero-shot classification)."""
    from ..benchmarks import benchmarks_named

    kept: dict[str, list[ChoiceTask]] = {}
    skipped: dict[str, str] = {}
    for b in benchmarks_named(names):
        tasks = as_tasks(b.prepare(inputs))
        other = sorted({type(t).__name__ for t in tasks if not isinstance(t, ChoiceTask)})
        if other:
            skipped[b.name] = f"not a choice between captions ({', '.join(other)})"
        else:
            kept[b.name] = tasks
    return kept, skipped


def run_blind(scorer: BlindTextScorer, prepared: Mapping[str, Sequence[ChoiceTask]]
              ) -> tuple[dict[str, pd.DataFrame], dict[str, float]]:
    """Per-item tables of every prepared benchmark (:func:`vlcomp.eval.engine.score_task`, images unread) and the
    seconds each took."""
    options = EngineOptions(check_images=False)
    tables: dict[str, pd.DataFrame] = {}
    seconds: dict[str, float] = {}
    for name, tasks in prepared.items():
        t0 = time.perf_counter()
        new = score_task(scorer, [without_images(t) for t in tasks], options)
        seconds[name] = round(time.perf_counter() - t0, 2)
        clash = sorted(set(new) & set(tables))
        if clash:
            raise ValueError(f"benchmark {name!r} writes tables {clash} that another benchmark wrote")
        tables.update(new)
    return tables, seconds


def reader_coverage(prepared: Mapping[str, Sequence[ChoiceTask]]) -> dict[str, dict[str, float]]:
    """Per benchmark: its distinct captions and the share the grammar reads no fact of (their blind score is 0)."""
    out = {}
    for name, tasks in prepared.items():
        captions = sorted({c for t in tasks for caps in t.captions for c in caps})
        unread = sum(read_caption(c).empty for c in captions)
        out[name] = {"captions": len(captions), "no_fact_share": round(unread / len(captions), 6) if captions else 0.0}
    return out


def evaluate_blind(scorer: BlindTextScorer, names: Sequence[str], inputs: Mapping[str, Any], out: str | Path,
                   provenance: Mapping[str, Any], tracker: Any = None) -> dict[str, float]:
    """The blind reader on the choice benchmarks of ``names``, as :func:`vlcomp.eval.run.evaluate_scorer` writes a
    model's outputs: ``out/items/*.parquet``, ``out/metrics.json`` derived from the saved tables alone by each
    benchmark's aggregate (a metric that is no number for a text-only reader, the VG text-swap cosine, is left out
    and listed in the provenance), ``out/provenance.json`` (``provenance`` + the counts, the benchmarks scored and
    skipped, item counts, reader coverage), written atomically; the metrics are logged to ``tracker``."""
    from ..benchmarks.registry import aggregate_tables
    from ..io import atomic_dir, write_json
    from .run import read_tables, write_tables

    if provenance.get("profile") is None:
        raise ValueError(f"evaluate_blind {out}: provenance must name the profile")
    t0 = time.time()
    prepared, skipped = choice_benchmarks(names, inputs)
    if not prepared:
        raise ValueError(f"evaluate_blind: none of {list(names)} is a choice benchmark")
    tables, seconds = run_blind(scorer, prepared)
    with atomic_dir(out) as tmp:
        write_tables(tmp, tables)
        derived = aggregate_tables(read_tables(tmp), list(prepared), inputs)
        metrics = {k: v for k, v in derived.items() if math.isfinite(v)}
        write_json(tmp / "metrics.json", metrics)
        settings = sorted({k for b in prepared for k in _settings(b) if inputs.get(k) is not None})
        write_json(tmp / "provenance.json", {
            "profile": provenance["profile"], **provenance, "counts": scorer.model.counts.summary(),
            "smoothing": scorer.model.smoothing, "benchmarks": list(prepared), "skipped": skipped,
            "not_applicable": sorted(k for k in derived if k not in metrics),
            "n_items": {k: len(v) for k, v in tables.items()}, "reader": reader_coverage(prepared),
            "settings": {k: inputs[k] for k in settings}})
    if tracker is not None:
        tracker.log_metrics(metrics)
        timing = {f"time/{b}_s": s for b, s in seconds.items()}
        tracker.log_metrics(timing | {"time/total_s": round(time.time() - t0, 2)})
    log.info("blind reader %s: %d benchmarks in %.1f s", scorer.name, len(prepared), time.time() - t0)
    return metrics


def _settings(name: str) -> tuple[str, ...]:
    from ..benchmarks import BENCHMARKS

    return BENCHMARKS.get(name).settings

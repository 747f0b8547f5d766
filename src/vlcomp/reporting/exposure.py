"""Words the models met in training (issue 27, item 5): per part of every choice benchmark, whether the words that
tell a true caption from its foil ever occurred in the training captions.

A benchmark item measures a model's reading of a word only if that word's embedding was trained. The first toy
world had no negation or count words, so CC-Neg and VALSE's counting and existence instruments measured random
token embeddings; the second world adds them at low rates (docs/world_v2.md). This table says, for every part, how
far its items rest on words the models met.

**Distinguishing words** of an item (:func:`distinguishing_words`): every word that occurs in one of its true
captions and not in a foil, or in a foil and not in a true caption, over every (true, foil) pair of its options.
With one true caption and one foil that is the symmetric difference of their word sets. Words are the world
tokenizer's (:mod:`vlcomp.text.tokenizer`: lower-cased, punctuation dropped, split on whitespace). An item whose
options differ only in word order (VG-Relation, VG-Attribution, the Order shuffles, SWAP) has none.

**Training captions** (:func:`training_splits`): the captions of the pretraining split (params ``pretrain.split``,
what the base CLIPs learn from) and of every fine-tuning split (params ``mine.<generator>.split``, what the
methods' fine-tunes read). Only the splits' captions are counted, not the negatives and positives mined from them.

**Per part** (:func:`part_exposure`): its items; its distinct distinguishing words; the share of items with none;
the share whose distinguishing words all occur at least once in the pretraining captions (an item with none
counts as covered); the share with at least one word that occurs in no training split (``untrained words``); and
its rarest distinguishing words with their counts (pretraining / all training splits).

The items come from the benchmarks' own prepare functions over the released-format files the ``benchmarks`` stage
wrote (:func:`vlcomp.eval.blind.choice_benchmarks`): what a model is scored on, option for option.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..metrics.aro import ORDER_CORRECT_INDEX, VG_CORRECT_INDEX

# the tokenizer's own word split (WorldTokenizer.encode); tests/reporting/test_exposure.py holds the two together
from ..text.tokenizer import _NON_WORD

#: The part of an item when a benchmark is reported as one row.
WHOLE = "all"
#: How many of a part's rarest distinguishing words the table shows.
N_RAREST = 5
#: The mark of a row with a word no training split contains.
UNTRAINED = "untrained words"


# --------------------------------------------------------------------------- which options are true, which part


def _column(name: str) -> Callable[[pd.DataFrame], list[str]]:
    return lambda meta: [str(v) for v in meta[name]]


def _whole(meta: pd.DataFrame) -> list[str]:
    return [WHOLE] * len(meta)


def _vlchecklist_part(meta: pd.DataFrame) -> list[str]:
    """A VL-CheckList item's category as its metric key names it (``attribute/color``); its file without a corpus."""
    from ..benchmarks.vlchecklist import VLC_CATEGORY_KEY

    categories = meta["category"] if "category" in meta.columns else [""] * len(meta)
    return [VLC_CATEGORY_KEY.get(str(c)) or str(f) for c, f in zip(categories, meta["file"], strict=True)]


@dataclass(frozen=True)
class ChoiceParts:
    """How one choice benchmark's items read for this table: the option indices of the true caption(s) (every
    other option is a foil) and each item's part (one row of the table)."""

    true: tuple[int, ...]
    part: Callable[[pd.DataFrame], Sequence[str]] = _whole


#: Every choice benchmark of the registry (a test holds it to the registry: the others are retrieval and zero-shot).
CHOICE_PARTS: Mapping[str, ChoiceParts] = {
    "vg_relation": ChoiceParts((VG_CORRECT_INDEX,)),  # [false, true]
    "vg_attribution": ChoiceParts((VG_CORRECT_INDEX,)),
    "coco_order": ChoiceParts((ORDER_CORRECT_INDEX,)),  # [original, 4 shuffles]
    "flickr_order": ChoiceParts((ORDER_CORRECT_INDEX,)),
    "valse": ChoiceParts((0,), _column("instrument")),  # [caption, foil]
    "ccneg": ChoiceParts((0,)),  # [true, negated]
    "crepe_negate": ChoiceParts((0,)),  # [caption, *hard negatives]
    "sugarcrepe": ChoiceParts((0,), _column("category")),  # [caption, negative]
    "vlchecklist": ChoiceParts((0,), _vlchecklist_part),  # [positive, negative]
    "replace": ChoiceParts((1, 3), _column("part")),  # [negative, caption, negative, hard positive]
    "swap": ChoiceParts((1, 3), _column("part")),
}


# --------------------------------------------------------------------------- words


def caption_words(text: str) -> list[str]:
    """The words of ``text`` as the world tokenizer splits them (lower-cased, punctuation dropped)."""
    return _NON_WORD.sub(" ", text.lower()).split()


def distinguishing_words(options: Sequence[str], true: Iterable[int]) -> frozenset[str]:
    """The words in a true option and not in a foil, or in a foil and not in a true option, over every (true, foil)
    pair; ``true``: the indices of the true options (the others are foils)."""
    true = set(true)
    if not true or any(not 0 <= i < len(options) for i in true):
        raise ValueError(f"true options {sorted(true)} must be indices of the {len(options)} options")
    words = [frozenset(caption_words(o)) for o in options]
    out: set[str] = set()
    for t in true:
        for f in range(len(options)):
            if f not in true:
                out |= words[t] ^ words[f]
    return frozenset(out)


def word_counts(captions: Iterable[Iterable[str]]) -> Counter:
    """Occurrences of every word over the captions of a split (a list of caption lists, one per image)."""
    counts: Counter = Counter()
    for caps in captions:
        for c in caps:
            counts.update(caption_words(c))
    return counts


# --------------------------------------------------------------------------- params


def training_splits(params: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """``(pretraining split, fine-tuning splits)``: params ``pretrain.split`` and every ``mine.<generator>.split``
    (in params order, each once)."""
    pretrain = (params.get("pretrain") or {}).get("split")
    if not isinstance(pretrain, str) or not pretrain:
        raise ValueError(f"params: pretrain.split={pretrain!r} must name the world split the base CLIPs learn from")
    finetune: list[str] = []
    for g, spec in (params.get("mine") or {}).items():
        split = (spec or {}).get("split")
        if not isinstance(split, str) or not split:
            raise ValueError(f"params: mine.{g}.split={split!r} must name the world split it mines")
        if split not in finetune:
            finetune.append(split)
    return pretrain, tuple(finetune)


# --------------------------------------------------------------------------- items and parts


@dataclass(frozen=True)
class Item:
    """One benchmark item for this table: its benchmark, its part and its distinguishing words."""

    benchmark: str
    part: str
    words: frozenset[str]


def task_items(benchmark: str, tasks: Sequence[Any], parts: ChoiceParts) -> list[Item]:
    """The items of a benchmark's prepared choice tasks (:class:`vlcomp.eval.engine.ChoiceTask`), in task order."""
    out = []
    for task in tasks:
        labels = list(parts.part(task.meta))
        out += [Item(benchmark, label, distinguishing_words(options, parts.true))
                for label, options in zip(labels, task.captions, strict=True)]
    return out


def benchmark_items(names: Sequence[str], inputs: Mapping[str, Any]) -> list[Item]:
    """The items of every choice benchmark of ``names`` (in that order), prepared from ``inputs`` by the benchmarks'
    own prepare functions; retrieval and zero-shot benchmarks are no choice between captions and have none."""
    from ..benchmarks import benchmarks_named
    from ..eval.blind import choice_benchmarks

    benchmarks_named(names)  # an unknown or repeated name raises, listing the known ones
    chosen = [n for n in names if n in CHOICE_PARTS]
    prepared, skipped = choice_benchmarks(chosen, inputs)
    if skipped:
        raise ValueError(f"word exposure: {sorted(skipped)} prepared no choice task ({skipped})")
    return [item for n in chosen for item in task_items(n, prepared[n], CHOICE_PARTS[n])]


def part_exposure(items: Sequence[Item], counts: Mapping[str, Mapping[str, int]], pretrain: str,
                  n_rarest: int = N_RAREST) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per part (first-seen order): ``benchmark``, ``part``, ``n_items``, ``n_words`` (distinct distinguishing
    words), ``no_word_differs``, ``all_in_pretraining``, ``unseen_in_training`` (shares of items, module docstring),
    ``rarest`` (``word pretraining/all``, rarest first, ties by word), ``untrained`` (any unseen word). And per
    (part, word): ``n_items`` with the word and its count in each split of ``counts`` (``{split: {word: n}}``,
    ``pretrain`` among them) and over all of them (``training``), rarest first."""
    if pretrain not in counts:
        raise ValueError(f"word counts have no pretraining split {pretrain!r} (splits: {', '.join(counts)})")
    splits = list(counts)

    def total(w: str) -> int:
        return sum(counts[s].get(w, 0) for s in splits)

    groups: dict[tuple[str, str], list[frozenset[str]]] = {}
    for it in items:
        groups.setdefault((it.benchmark, it.part), []).append(it.words)
    rows, word_rows = [], []
    for (bench, part), words in groups.items():
        n = len(words)
        per_word = Counter(w for ws in words for w in ws)
        rank = sorted(per_word, key=lambda w: (total(w), counts[pretrain].get(w, 0), w))
        unseen = sum(any(total(w) == 0 for w in ws) for ws in words)
        rows.append({
            "benchmark": bench, "part": part, "n_items": n, "n_words": len(per_word),
            "no_word_differs": sum(not ws for ws in words) / n,
            "all_in_pretraining": sum(all(counts[pretrain].get(w, 0) > 0 for w in ws) for ws in words) / n,
            "unseen_in_training": unseen / n,
            "rarest": "; ".join(f"{w} {counts[pretrain].get(w, 0)}/{total(w)}" for w in rank[:n_rarest]),
            "untrained": unseen > 0,
        })
        word_rows += [{"benchmark": bench, "part": part, "word": w, "n_items": per_word[w],
                       **{s: int(counts[s].get(w, 0)) for s in splits}, "training": total(w)} for w in rank]
    parts = pd.DataFrame(rows, columns=["benchmark", "part", "n_items", "n_words", "no_word_differs",
                                        "all_in_pretraining", "unseen_in_training", "rarest", "untrained"])
    words_df = pd.DataFrame(word_rows, columns=["benchmark", "part", "word", "n_items", *splits, "training"])
    return parts, words_df


@dataclass(frozen=True)
class WordExposure:
    """:func:`word_exposure`'s result: the per-part table, the per-word table, and the splits counted."""

    parts: pd.DataFrame
    words: pd.DataFrame
    pretrain: str
    finetune: tuple[str, ...]


def word_exposure(world_dir: str | Path, benchmarks_dir: str | Path, params: Mapping[str, Any]) -> WordExposure:
    """The per-part and per-word tables (:func:`part_exposure`) of the choice benchmarks of ``evaluate.benchmarks``
    in the ``benchmarks`` stage's output ``benchmarks_dir`` (its ``manifest.json``), counted over the captions of
    the training splits (:func:`training_splits`) of the world at ``world_dir`` (toy profile)."""
    from ..eval.inputs import evaluation_benchmarks, read_manifest
    from ..world import Split

    pretrain, finetune = training_splits(params)
    items = benchmark_items(evaluation_benchmarks(params), read_manifest(benchmarks_dir))
    counts = {s: word_counts(Split(world_dir, s).captions()) for s in dict.fromkeys([pretrain, *finetune])}
    parts, words = part_exposure(items, counts, pretrain)
    return WordExposure(parts, words, pretrain, finetune)


def write_exposure(result: WordExposure, out_dir: str | Path) -> str:
    """``out_dir/word_exposure.csv`` (per part) and ``word_exposure_words.csv`` (per part and word); returns the
    index page's section (:func:`exposure_html`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result.parts.to_csv(out / "word_exposure.csv", index=False, float_format="%.6f")
    result.words.to_csv(out / "word_exposure_words.csv", index=False)
    return exposure_html(result)


# --------------------------------------------------------------------------- the index page's section

TABLE_ATTRS = "border='1' cellspacing='0' cellpadding='3' style='font-size:11px;border-collapse:collapse'"


def exposure_html(result: WordExposure) -> str:
    """The section "Words the models met in training": one row per part, rows with an unseen word marked."""
    tuned = ", ".join(f"<code>{html.escape(s)}</code>" for s in result.finetune) or "none"
    head = ("<tr><th>benchmark</th><th>part</th><th>items</th><th>distinguishing words</th>"
            "<th>share: no word differs</th><th>share: all met in pretraining</th>"
            "<th>share: a word met in no training split</th>"
            "<th>rarest distinguishing words (count in pretraining / all training captions)</th><th></th></tr>")
    body = ""
    for r in result.parts.itertuples(index=False):
        mark = f"<span class='not' style='color:#a11;font-weight:600'>{UNTRAINED}</span>" if r.untrained else ""
        body += (f"<tr><td>{html.escape(r.benchmark)}</td><td>{html.escape(r.part)}</td><td>{r.n_items}</td>"
                 f"<td>{r.n_words}</td><td>{r.no_word_differs:.3f}</td><td>{r.all_in_pretraining:.3f}</td>"
                 f"<td>{r.unseen_in_training:.3f}</td><td>{html.escape(r.rarest)}</td><td>{mark}</td></tr>")
    return ("<h2 id='words'>Words the models met in training</h2>"
            "<p>A benchmark part whose distinguishing words never occurred in training measures untrained "
            "embeddings: the first world had no negation or count words, so CC-Neg and VALSE's counting and "
            "existence instruments measured random token embeddings. An item's distinguishing words are the words in "
            "its true caption and not in a foil, or in a foil and not in the true caption (world tokenizer words); "
            "an item whose options differ only in word order has none. Counted over the captions of the pretraining "
            f"split <code>{html.escape(result.pretrain)}</code> (params <code>pretrain.split</code>) and of the "
            f"fine-tuning splits {tuned} (params <code>mine.*.split</code>); the negatives mined from them are not "
            "counted. <em>untrained words</em>: some item has a word no training split contains. Per word: "
            "<code>matrix/word_exposure_words.csv</code>.</p>"
            f"<div style='overflow-x:auto'><table {TABLE_ATTRS}>{head}{body}</table></div>")

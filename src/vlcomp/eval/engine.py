"""The scoring engine every real-profile benchmark runs on: batched, each unique image and caption encoded once.

Two task shapes cover all benchmarks:

- :class:`ChoiceTask` - N items, each one image (a hashable *key*, read lazily through ``load_image(key)``)
  and K candidate captions; the engine returns scores ``[N, K]``. ARO, SugarCrepe, VALSE, VL-CheckList,
  CC-Neg and REPLACE/SWAP are all this shape; only the caption layout and the decision rule differ.
- :class:`RetrievalTask` - the Karpathy test image x caption matrix (COCO / Flickr30k retrieval).

How a scorer is used (``vlcomp.models.scorers``):

- ``kind == "dual"``: every *unique* image key is loaded once and encoded (``encode_images`` on chunks of
  ``image_chunk`` images, so memory stays bounded), every *unique* caption string is encoded once (in
  batches of similar length, so little padding is computed), and a score is the dot product of the two
  (rows are L2-normalised: the cosine). The real files repeat both a lot (VG-R cases share crops,
  SugarCrepe categories share COCO images, SWAP re-scores ``c_n``).
- ``kind == "cross"``: every unique (image, caption) pair goes through ``score_pairs`` (BLIP: ITM logit + ITC
  cosine; FLAVA: ITM softmax - whatever the scorer defines) in batches of ``pair_batch`` pairs, pairs sorted by
  image so each image is read once and a batch holds few distinct images.
- Retrieval: a dual scorer gives the full similarity matrix. A cross scorer must offer ``dual_view()`` (a dual
  scorer over its ITC / unimodal features). By default (``retrieval_mode = "rerank"``, BLIP/X-VLM) each query
  keeps its top ``k_test`` (128) candidates under the dual view, re-scored with ``score_pairs``, and every
  other entry is -100, in both directions. A cross scorer whose attribute ``retrieval_mode`` is
  ``"dual_view"`` (FLAVA) is scored by its dual view alone. ``k_test`` may also be set on the scorer.

Naive reference (:func:`naive_choice_scores`, :func:`naive_retrieval_scores`): one item at a time, the way
the reference scripts run (read one image, preprocess and encode it, encode its captions - in one call per
item, or one call per caption as SugarCrepe's ``main_eval.py`` - compare; no cache). Parity tests hold the
batched engine to it.

AMBIGUOUS (documented choices):

- Top-``k_test`` selection among equal dual-view scores: stable descending order (the lower index wins), the
  same rule as :data:`vlcomp.metrics.retrieval.RETRIEVAL_TIE_RULE`. BLIP uses ``torch.topk`` (order among ties
  unspecified).
- A cross scorer without ``dual_view`` gets the full matrix from ``score_pairs`` (``retrieval_mode="full"``:
  every pair; fine for tests, hours for COCO), since no reference defines that case.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import torch

log = logging.getLogger(__name__)

#: The score BLIP's retrieval evaluation gives every candidate left out of the top ``k_test``.
RERANK_FILL = -100.0
DEFAULT_K_TEST = 128
RETRIEVAL_MODES = ("auto", "dual", "dual_view", "rerank", "full")

ImageLoader = Callable[[Hashable], Any]
ChoiceFinish = Callable[[pd.DataFrame, np.ndarray], dict[str, pd.DataFrame]]
RetrievalFinish = Callable[[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray], dict[str, pd.DataFrame]]


@dataclass(frozen=True)
class EngineOptions:
    """Batch sizes of the batched engine (none of them changes a score beyond float rounding)."""

    image_chunk: int = 64  # images read and handed to ``encode_images`` at once (the scorer batches inside)
    text_chunk: int = 256  # captions (sorted by length) handed to ``encode_texts`` at once
    pair_batch: int | None = None  # pairs per ``score_pairs`` call; None: the scorer's ``pair_batch``, else 64
    score_block: int = 8192  # items per gather + dot-product block
    k_test: int | None = None  # cross retrieval re-ranking depth; None: the scorer's ``k_test`` or 128
    check_images: bool = True  # look for every image file before scoring (fail in seconds, not hours)
    pixel_cache_mb: int = 1024  # preprocessed images kept for image-perturbation views (FeatureCache.pixels)

    def __post_init__(self) -> None:
        if isinstance(self.pixel_cache_mb, bool) or not isinstance(self.pixel_cache_mb, int) or self.pixel_cache_mb < 0:
            raise ValueError(f"EngineOptions.pixel_cache_mb must be an int >= 0 (0: no pixel cache), "
                             f"got {self.pixel_cache_mb!r}")
        for name in ("image_chunk", "text_chunk", "score_block", "pair_batch", "k_test"):
            value = getattr(self, name)
            if value is None and name in ("pair_batch", "k_test"):
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"EngineOptions.{name} must be a positive int, got {value!r}")

    def pairs_per_call(self, scorer: Any) -> int:
        """``pair_batch``, else the scorer's own (``BlipScorer.pair_batch``), else 64."""
        value = self.pair_batch or getattr(scorer, "pair_batch", None) or 64
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"scorer {getattr(scorer, 'name', '?')!r}: pair_batch must be a positive int, "
                             f"got {value!r}")
        return value


@dataclass
class FeatureCache:
    """Features of one dual scorer, shared by the benchmarks of one run: COCO-Order and COCO retrieval read the
    same 5,000 images, and SWAP re-scores VG-Attribution's crops and captions. Keys must name an image
    globally (they include the image root)."""

    scorer: Any
    images: dict[Hashable, torch.Tensor] = field(default_factory=dict)
    texts: dict[str, torch.Tensor] = field(default_factory=dict)
    #: Preprocessed image tensors of the images that image-perturbation views read (ARO's image shuffles: every
    #: strategy x seed re-reads the same Karpathy test images), shared by the views of one run, so each image is
    #: read and preprocessed once. Bounded by :attr:`EngineOptions.pixel_cache_mb`; an image left out is simply
    #: read again (the same bits either way: preprocessing is per image).
    pixels: dict[Hashable, torch.Tensor] = field(default_factory=dict)

    def check(self, scorer: Any) -> None:
        if scorer is not self.scorer:
            raise ValueError(f"FeatureCache belongs to scorer {getattr(self.scorer, 'name', '?')!r}, "
                             f"not to {getattr(scorer, 'name', '?')!r}")


@dataclass
class ChoiceTask:
    """N items, each one image key and K candidate captions; ``finish(meta, scores)`` turns the ``[N, K]``
    scores into the benchmark's per-item tables (``meta`` holds one row per item)."""

    name: str
    meta: pd.DataFrame
    image_keys: list[Hashable]
    captions: list[tuple[str, ...]]
    load_image: ImageLoader
    finish: ChoiceFinish
    image_file: Callable[[Hashable], Path] | None = None  # for the up-front existence check
    naive_text_calls: Literal["per_item", "per_caption"] = "per_item"
    #: Controls: name -> another image key per item, scored against the same captions (the wrong-image control
    #: of ARO: a derangement of the items' images). ``finish`` then gets ``extras[name]``, scores ``[N, K]``.
    controls: Mapping[str, Sequence[Hashable]] = field(default_factory=dict)
    #: Caption-pair diagnostics: name -> (option i, option j); ``finish`` gets ``extras[name]`` ``[N]``, the
    #: cosine of the two captions' text features (the scorer's dual view for a cross scorer; NaN without one).
    text_pairs: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: A wrapper applied to the scorer for this task (image perturbations); its features are never cached.
    scorer_view: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        n = len(self.meta)
        if len(self.image_keys) != n or len(self.captions) != n:
            raise ValueError(f"{self.name}: {n} items in meta but {len(self.image_keys)} image keys and "
                             f"{len(self.captions)} caption lists")
        if n == 0:
            raise ValueError(f"{self.name}: no items to score")
        k = check_captions(self.captions, self.name)
        for name, keys in self.controls.items():
            if len(keys) != n:
                raise ValueError(f"{self.name}: control {name!r} has {len(keys)} image keys for {n} items")
        for name, (i, j) in self.text_pairs.items():
            if not (0 <= i < k and 0 <= j < k):
                raise ValueError(f"{self.name}: text pair {name!r} = ({i}, {j}) is outside the {k} options")
        if self.naive_text_calls not in ("per_item", "per_caption"):
            raise ValueError(f"{self.name}: naive_text_calls must be 'per_item' or 'per_caption', "
                             f"got {self.naive_text_calls!r}")


@dataclass
class RetrievalTask:
    """Karpathy-test retrieval: unique images, captions, the image of each caption."""

    name: str
    image_meta: pd.DataFrame  # one row per image
    text_meta: pd.DataFrame  # one row per caption
    image_keys: list[Hashable]
    texts: list[str]
    text_to_image: np.ndarray
    load_image: ImageLoader
    finish: RetrievalFinish
    image_file: Callable[[Hashable], Path] | None = None
    #: A wrapper applied to the scorer for this task (ARO's image shuffles); its features are never cached.
    scorer_view: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        if len(self.image_meta) != len(self.image_keys) or len(self.text_meta) != len(self.texts):
            raise ValueError(f"{self.name}: meta tables do not match {len(self.image_keys)} images and "
                             f"{len(self.texts)} captions")
        if len(set(self.image_keys)) != len(self.image_keys):
            raise ValueError(f"{self.name}: image keys must be unique in a retrieval task")
        self.text_to_image = np.asarray(self.text_to_image, dtype=np.int64)
        if self.text_to_image.shape != (len(self.texts),):
            raise ValueError(f"{self.name}: text_to_image has shape {self.text_to_image.shape}, "
                             f"expected ({len(self.texts)},)")
        if not self.texts or not self.image_keys:
            raise ValueError(f"{self.name}: no images or captions to score")
        if self.text_to_image.min() < 0 or self.text_to_image.max() >= len(self.image_keys):
            raise ValueError(f"{self.name}: text_to_image values must lie in [0, {len(self.image_keys) - 1}]")


Template = str | Callable[[str], str]


@dataclass
class ClassificationTask:
    """Zero-shot classification: N images, C class names, one or more named prompt sets (``{"standard": [...],
    "negated": [...]}``); a template is a string with ``{c}`` (CLIP_benchmark's placeholder) or a callable
    ``classname -> prompt``.
    Each prompt set gives a zero-shot classifier, CLIP's: every prompt of a class encoded and L2-normalised, the
    mean over templates re-normalised (prompt ensembling). ``finish(meta, logits)`` gets ``{set: [N, C]}``
    (image-classifier cosines)."""

    name: str
    meta: pd.DataFrame  # one row per image (label, ...)
    image_keys: list[Hashable]
    classnames: list[str]
    templates: Mapping[str, Sequence[Template]]
    load_image: ImageLoader
    finish: Callable[[pd.DataFrame, dict[str, np.ndarray]], dict[str, pd.DataFrame]]
    image_file: Callable[[Hashable], Path] | None = None
    scorer_view: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        if len(self.meta) != len(self.image_keys) or not self.image_keys:
            raise ValueError(f"{self.name}: {len(self.meta)} rows in meta but {len(self.image_keys)} image keys "
                             "(need at least one)")
        if len(self.classnames) < 2 or len(set(self.classnames)) != len(self.classnames):
            raise ValueError(f"{self.name}: need at least 2 distinct class names, got {self.classnames!r:.120}")
        if not self.templates or any(not ts for ts in self.templates.values()):
            raise ValueError(f"{self.name}: every prompt set needs at least one template")

    def prompts(self, prompt_set: str) -> list[list[str]]:
        """``[C][T]`` prompts of one prompt set."""
        out = []
        for c in self.classnames:
            row = [t(c) if callable(t) else t.replace("{c}", c) for t in self.templates[prompt_set]]
            for p in row:
                if not isinstance(p, str) or not p.strip():
                    raise ValueError(f"{self.name}: prompt set {prompt_set!r} gives an empty prompt for {c!r}")
            out.append(row)
        return out


Task = ChoiceTask | RetrievalTask | ClassificationTask


class ImagePerturbedScorer:
    """A dual scorer whose images are perturbed after the base scorer's own preprocessing (ARO's image shuffles
    act on the model-preprocessed tensor): ``encode_images`` = ``base.encode_image_tensor(perturb(base.
    preprocess_images(images)))``. ``perturb(x)`` draws its randomness from a generator it closes over, image by
    image in order, so the features do not depend on how the engine chunks the images. Texts go to the base."""

    kind = "dual"

    def __init__(self, base: Any, perturb: Callable[[torch.Tensor], torch.Tensor], label: str) -> None:
        if _kind(base) != "dual" or not all(hasattr(base, a) for a in ("preprocess_images", "encode_image_tensor")):
            raise ValueError(f"scorer {getattr(base, 'name', base)!r}: image perturbations need a dual scorer with "
                             "preprocess_images() and encode_image_tensor() (open_clip scorers have them)")
        self.base, self.perturb, self.name = base, perturb, f"{base.name}+{label}"

    def encode_images(self, images: Sequence) -> torch.Tensor:
        return self.encode_pixels(self.preprocess_images(images))

    def preprocess_images(self, images: Sequence) -> torch.Tensor:
        return self.base.preprocess_images(images)

    def encode_pixels(self, x: torch.Tensor) -> torch.Tensor:
        """Features of already preprocessed images ``[N, 3, S, S]``, perturbed in order (what the engine calls
        with images from :attr:`FeatureCache.pixels`)."""
        return self.base.encode_image_tensor(self.perturb(x))

    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        return self.base.encode_texts(texts)

    def score_pairs(self, images: Sequence, texts: Sequence[str]) -> torch.Tensor:
        return (self.encode_images(images) * self.encode_texts(texts)).sum(dim=1)


# --------------------------------------------------------------------------- checks


def check_captions(captions: Sequence[Sequence[str]], name: str) -> int:
    """Rectangular ``[N][K]`` caption lists of non-empty strings; returns K."""
    if not captions:
        raise ValueError(f"{name}: no items")
    k = len(captions[0])
    for i, caps in enumerate(captions):
        if isinstance(caps, str) or len(caps) != k:
            got = "a str" if isinstance(caps, str) else f"{len(caps)} captions"
            raise ValueError(f"{name}: item {i} has {got}, item 0 has {k}; every item needs the same K")
        for c in caps:
            if not isinstance(c, str) or not c.strip():
                raise ValueError(f"{name}: item {i}: caption {c!r:.80} is empty or not a string")
    if k < 1:
        raise ValueError(f"{name}: items have no caption")
    return k


def _kind(scorer: Any) -> str:
    kind = getattr(scorer, "kind", None)
    if kind not in ("dual", "cross"):
        raise ValueError(f"scorer {getattr(scorer, 'name', scorer)!r}: kind must be 'dual' or 'cross', got {kind!r}")
    return kind


def _features(out: torch.Tensor, n: int, what: str, scorer: Any) -> torch.Tensor:
    if not isinstance(out, torch.Tensor) or out.ndim != 2 or out.shape[0] != n:
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(f"scorer {getattr(scorer, 'name', '?')!r}: {what} returned {shape} for {n} inputs, "
                         "expected [N, D]")
    return out.detach().float().cpu()


def _pair_out(out: torch.Tensor, n: int, scorer: Any) -> np.ndarray:
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (n,):
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(f"scorer {getattr(scorer, 'name', '?')!r}: score_pairs returned {shape} for {n} pairs, "
                         "expected [N]")
    return out.detach().float().cpu().numpy()


def check_image_files(keys: Sequence[Hashable], image_file: Callable[[Hashable], Path] | None,
                      load_image: ImageLoader, name: str) -> None:
    """Raise before any scoring when an image file is missing: the loader's own error (it names the file,
    record and path of the first missing image) plus how many are missing."""
    if image_file is None:
        return
    unique = list(dict.fromkeys(keys))
    missing = [k for k in unique if not Path(image_file(k)).is_file()]
    if not missing:
        return
    try:
        load_image(missing[0])
    except FileNotFoundError as e:
        raise FileNotFoundError(f"{e} ({len(missing)} of {len(unique)} images of {name} are missing)") from None
    raise FileNotFoundError(f"{name}: image {image_file(missing[0])} not found "
                            f"({len(missing)} of {len(unique)} images missing)")


# --------------------------------------------------------------------------- encoding


def _index(values: Sequence[Hashable]) -> tuple[list[Hashable], np.ndarray]:
    """Unique values in first-appearance order and the index of every value into them."""
    pos: dict[Hashable, int] = {}
    idx = np.fromiter((pos.setdefault(v, len(pos)) for v in values), dtype=np.int64, count=len(values))
    return list(pos), idx


def _cached_pixels(scorer: Any, part: Sequence[Hashable], load_image: ImageLoader, cache: FeatureCache,
                   budget_bytes: int) -> torch.Tensor:
    """``[len(part), 3, S, S]`` preprocessed images of ``part``, read from ``cache.pixels`` or read, preprocessed
    and kept there while the cache holds fewer than ``budget_bytes``."""
    missing = [k for k in part if k not in cache.pixels]
    fresh = dict(zip(missing, scorer.preprocess_images([load_image(k) for k in missing]).unbind(0), strict=True)) \
        if missing else {}
    held = sum(t.numel() * t.element_size() for t in cache.pixels.values())
    for k, t in fresh.items():
        if held + t.numel() * t.element_size() > budget_bytes:
            break
        cache.pixels[k] = t
        held += t.numel() * t.element_size()
    return torch.stack([fresh[k] if k in fresh else cache.pixels[k] for k in part])


def encode_unique_images(scorer: Any, keys: Sequence[Hashable], load_image: ImageLoader, *, chunk: int = 64,
                         cache: FeatureCache | None = None, pixel_cache_mb: int = 1024) -> torch.Tensor:
    """``[len(keys), D]`` features of distinct image keys, reading ``chunk`` images at a time. A scorer with
    ``encode_pixels`` (an image-perturbation view) is handed preprocessed images, kept in ``cache.pixels``
    (up to ``pixel_cache_mb``) for the next view of the same images."""
    todo = [k for k in keys if cache is None or k not in cache.images]
    feats: dict[Hashable, torch.Tensor] = {}
    by_pixels = cache is not None and hasattr(scorer, "encode_pixels")
    for s in range(0, len(todo), chunk):
        part = todo[s : s + chunk]
        if by_pixels:
            x = _cached_pixels(scorer, part, load_image, cache, pixel_cache_mb * 2**20)
            out = _features(scorer.encode_pixels(x), len(part), "encode_pixels", scorer)
        else:
            out = _features(scorer.encode_images([load_image(k) for k in part]), len(part), "encode_images", scorer)
        feats.update(zip(part, out, strict=True))
    if cache is not None:
        cache.images.update(feats)
        feats = cache.images
    log.debug("encoded %d of %d unique images", len(todo), len(keys))
    return torch.stack([feats[k] for k in keys]) if keys else torch.zeros(0, 0)


def encode_unique_texts(scorer: Any, texts: Sequence[str], *, chunk: int = 256,
                        cache: FeatureCache | None = None) -> torch.Tensor:
    """``[len(texts), D]`` features of distinct caption strings, encoded in order of length: a text tower pads
    (or trims) a batch to its longest caption, so mixing short and long captions multiplies the work (on real
    SugarCrepe captions, unsorted batches of 256 cost ~2.5x the tokens)."""
    todo = sorted((t for t in texts if cache is None or t not in cache.texts), key=lambda t: (len(t.split()), len(t)))
    feats: dict[str, torch.Tensor] = {}
    for s in range(0, len(todo), chunk):
        part = list(todo[s : s + chunk])
        feats.update(zip(part, _features(scorer.encode_texts(part), len(part), "encode_texts", scorer), strict=True))
    if cache is not None:
        cache.texts.update(feats)
        feats = cache.texts
    return torch.stack([feats[t] for t in texts]) if texts else torch.zeros(0, 0)


def score_pairs_by_image(scorer: Any, image_idx: np.ndarray, text_idx: np.ndarray, image_keys: Sequence[Hashable],
                         texts: Sequence[str], load_image: ImageLoader, *, batch: int = 64) -> np.ndarray:
    """``score_pairs`` over aligned index arrays (pairs assumed distinct), batched, pairs sorted by image so
    every image is read once (an image whose pairs straddle two batches stays loaded)."""
    image_idx, text_idx = np.asarray(image_idx, dtype=np.int64), np.asarray(text_idx, dtype=np.int64)
    out = np.empty(len(image_idx), dtype=np.float32)
    order = np.lexsort((text_idx, image_idx))
    loaded: dict[int, Any] = {}
    for s in range(0, len(order), batch):
        sel = order[s : s + batch]
        loaded = {int(i): loaded[int(i)] if int(i) in loaded else load_image(image_keys[int(i)])
                  for i in dict.fromkeys(image_idx[sel].tolist())}
        images = [loaded[int(i)] for i in image_idx[sel]]
        out[sel] = _pair_out(scorer.score_pairs(images, [texts[int(j)] for j in text_idx[sel]]), len(sel), scorer)
    return out


# --------------------------------------------------------------------------- multiple choice


def tie_identical_options(scores: np.ndarray, captions: Sequence[Sequence[str]]) -> np.ndarray:
    """``scores`` ``[N, K]`` with every option whose text repeats an earlier option of the same item set to that
    option's score: two identical captions of one image tie by definition, whatever the float rounding of two
    encodings of the same string (which differs between batch compositions and CPUs: AVX2 vs AVX-512)."""
    for n, caps in enumerate(captions):
        first: dict[str, int] = {}
        for j, c in enumerate(caps):
            i = first.setdefault(c, j)
            if i != j:
                scores[n, j] = scores[n, i]
    return scores


def score_choices(scorer: Any, image_keys: Sequence[Hashable], captions: Sequence[Sequence[str]],
                  load_image: ImageLoader, options: EngineOptions | None = None, *,
                  cache: FeatureCache | None = None) -> np.ndarray:
    """Scores ``[N, K]`` (float32) of item ``n``'s image with each of its K captions, batched (module docstring)."""
    options = options or EngineOptions()
    k = check_captions(captions, "score_choices")
    if len(image_keys) != len(captions):
        raise ValueError(f"score_choices: {len(image_keys)} image keys but {len(captions)} caption lists")
    n = len(captions)
    uimg, img_idx = _index(image_keys)
    utxt, txt_idx = _index([c for caps in captions for c in caps])
    txt_idx = txt_idx.reshape(n, k)
    log.info("scoring %d items x %d captions: %d unique images, %d unique captions", n, k, len(uimg), len(utxt))
    if _kind(scorer) == "cross":
        pair = img_idx[:, None] * len(utxt) + txt_idx  # [N, K] id of each (image, caption) pair
        upair, inverse = np.unique(pair.ravel(), return_inverse=True)
        s = score_pairs_by_image(scorer, upair // len(utxt), upair % len(utxt), uimg, utxt, load_image,
                                 batch=options.pairs_per_call(scorer))
        return tie_identical_options(s[inverse].reshape(n, k), captions)
    if cache is not None:
        cache.check(scorer)
    fi = encode_unique_images(scorer, uimg, load_image, chunk=options.image_chunk, cache=cache,
                              pixel_cache_mb=options.pixel_cache_mb)  # [Ui, D]
    ft = encode_unique_texts(scorer, utxt, chunk=options.text_chunk, cache=cache)  # [Ut, D]
    if fi.shape[1] != ft.shape[1]:
        raise ValueError(f"scorer {scorer.name!r}: image features have {fi.shape[1]} dims, "
                         f"text features {ft.shape[1]}")
    out = np.empty((n, k), dtype=np.float32)
    for s in range(0, n, options.score_block):
        b = slice(s, min(s + options.score_block, n))
        gathered_i, gathered_t = fi[torch.from_numpy(img_idx[b])], ft[torch.from_numpy(txt_idx[b])]  # [B, D], [B, K, D]
        out[b] = torch.einsum("nd,nkd->nk", gathered_i, gathered_t).numpy()
    return tie_identical_options(out, captions)


def naive_choice_scores(scorer: Any, image_keys: Sequence[Hashable], captions: Sequence[Sequence[str]],
                        load_image: ImageLoader, *, text_calls: str = "per_item") -> np.ndarray:
    """The reference loop: per item read the image, encode it alone, encode its captions (one call, or one
    call per caption with ``text_calls="per_caption"``), compare. No cache, no batching across items."""
    k = check_captions(captions, "naive_choice_scores")
    if len(image_keys) != len(captions):
        raise ValueError(f"naive_choice_scores: {len(image_keys)} image keys but {len(captions)} caption lists")
    kind = _kind(scorer)
    out = np.empty((len(captions), k), dtype=np.float32)
    for n, (key, caps) in enumerate(zip(image_keys, captions, strict=True)):
        image = load_image(key)
        if kind == "cross":
            out[n] = _pair_out(scorer.score_pairs([image] * k, list(caps)), k, scorer)
            continue
        fi = _features(scorer.encode_images([image]), 1, "encode_images", scorer)[0]
        if text_calls == "per_caption":
            ft = torch.cat([_features(scorer.encode_texts([c]), 1, "encode_texts", scorer) for c in caps])
        else:
            ft = _features(scorer.encode_texts(list(caps)), k, "encode_texts", scorer)
        out[n] = (ft @ fi).numpy()
    return tie_identical_options(out, captions)


# --------------------------------------------------------------------------- retrieval


def retrieval_mode(scorer: Any, mode: str = "auto") -> str:
    """``dual`` (dual scorer), ``rerank`` (cross + ITC top-k, BLIP), ``dual_view`` (cross scored by its dual
    view, FLAVA) or ``full`` (cross, every pair)."""
    if mode not in RETRIEVAL_MODES:
        raise ValueError(f"retrieval mode must be one of {', '.join(RETRIEVAL_MODES)}, got {mode!r}")
    kind = _kind(scorer)
    if mode == "auto":
        if kind == "dual":
            return "dual"
        mode = getattr(scorer, "retrieval_mode", None) or ("rerank" if hasattr(scorer, "dual_view") else "full")
    if mode == "dual" and kind != "dual":
        raise ValueError(f"scorer {scorer.name!r} is a cross scorer: retrieval mode 'dual' needs a dual scorer")
    if mode in ("rerank", "dual_view"):
        if kind != "cross" or not hasattr(scorer, "dual_view"):
            raise ValueError(f"scorer {scorer.name!r}: retrieval mode {mode!r} needs a cross scorer with dual_view()")
    return mode


def _k_test(scorer: Any, options: EngineOptions) -> int:
    k = options.k_test or getattr(scorer, "k_test", None) or DEFAULT_K_TEST
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"scorer {scorer.name!r}: k_test must be a positive int, got {k!r}")
    return k


def topk_stable(scores: np.ndarray, k: int, block: int = 256) -> np.ndarray:
    """Column indices ``[R, min(k, M)]`` of each row's ``k`` largest scores, ties to the lower index."""
    k = min(k, scores.shape[1])
    out = np.empty((scores.shape[0], k), dtype=np.int64)
    for s in range(0, scores.shape[0], block):
        out[s : s + block] = np.argsort(-scores[s : s + block], axis=1, kind="stable")[:, :k]
    return out


def _dual_matrix(scorer: Any, keys: Sequence[Hashable], texts: Sequence[str], load_image: ImageLoader,
                 options: EngineOptions, cache: FeatureCache | None) -> np.ndarray:
    utxt, tidx = _index(texts)
    fi = encode_unique_images(scorer, keys, load_image, chunk=options.image_chunk, cache=cache,
                              pixel_cache_mb=options.pixel_cache_mb)
    ft = encode_unique_texts(scorer, utxt, chunk=options.text_chunk, cache=cache)
    sim = (fi @ ft.T).numpy()  # COCO: 5,000 x 25,010 float32 = 500 MB, so no copy when captions are unique
    return sim if len(utxt) == len(texts) else sim[:, tidx]


def retrieval_scores(scorer: Any, image_keys: Sequence[Hashable], texts: Sequence[str], load_image: ImageLoader,
                     options: EngineOptions | None = None, *, mode: str = "auto",
                     cache: FeatureCache | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """``(scores_i2t, scores_t2i, mode)``, both ``[n_images, n_texts]`` (equal unless re-ranked); see the
    module docstring for the modes."""
    options = options or EngineOptions()
    mode = retrieval_mode(scorer, mode)
    if mode == "dual":
        if cache is not None:
            cache.check(scorer)
        sim = _dual_matrix(scorer, image_keys, texts, load_image, options, cache)
        return sim, sim, mode
    if mode == "dual_view":
        sim = _dual_matrix(scorer.dual_view(), image_keys, texts, load_image, options, None)
        return sim, sim, mode
    n_img, n_txt = len(image_keys), len(texts)
    utxt, tidx = _index(texts)
    if mode == "full":
        ii, jj = np.divmod(np.arange(n_img * len(utxt)), len(utxt))
        s = score_pairs_by_image(scorer, ii, jj, image_keys, utxt, load_image, batch=options.pairs_per_call(scorer))
        sim = s.reshape(n_img, len(utxt))[:, tidx]
        return sim, sim, mode
    k = _k_test(scorer, options)
    itc = _dual_matrix(scorer.dual_view(), image_keys, texts, load_image, options, None)
    top_t = topk_stable(itc, k)  # [I, k] texts of each image
    top_i = topk_stable(itc.T, k)  # [T, k] images of each text
    del itc
    rows_a, cols_a = np.repeat(np.arange(n_img), top_t.shape[1]), top_t.ravel()
    cols_b, rows_b = np.repeat(np.arange(n_txt), top_i.shape[1]), top_i.ravel()
    pair = np.unique(np.concatenate([rows_a * n_txt + cols_a, rows_b * n_txt + cols_b]))
    pi, pj = np.divmod(pair, n_txt)
    s = score_pairs_by_image(scorer, pi, tidx[pj], image_keys, utxt, load_image, batch=options.pairs_per_call(scorer))
    i2t = np.full((n_img, n_txt), RERANK_FILL, dtype=np.float32)
    t2i = np.full((n_img, n_txt), RERANK_FILL, dtype=np.float32)
    i2t[rows_a, cols_a] = s[np.searchsorted(pair, rows_a * n_txt + cols_a)]  # pair is sorted and unique
    t2i[rows_b, cols_b] = s[np.searchsorted(pair, rows_b * n_txt + cols_b)]
    log.info("re-ranked %d (image, caption) pairs with k_test=%d", len(pair), k)
    return i2t, t2i, mode


def naive_retrieval_scores(scorer: Any, image_keys: Sequence[Hashable], texts: Sequence[str],
                           load_image: ImageLoader, *, mode: str = "auto",
                           k_test: int | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """The reference loop: every image and caption encoded alone; a cross scorer re-scores each query's top
    ``k_test`` one query at a time (BLIP's ``evaluation`` loop)."""
    mode = retrieval_mode(scorer, mode)
    dual = scorer if mode == "dual" else scorer.dual_view() if mode in ("dual_view", "rerank") else None
    n_img, n_txt = len(image_keys), len(texts)
    if dual is not None:
        fi = torch.cat([_features(dual.encode_images([load_image(k)]), 1, "encode_images", dual) for k in image_keys])
        ft = torch.cat([_features(dual.encode_texts([t]), 1, "encode_texts", dual) for t in texts])
        sim = (fi @ ft.T).numpy()
        if mode != "rerank":
            return sim, sim, mode
    if mode == "full":
        sim = np.empty((n_img, n_txt), dtype=np.float32)
        for i, key in enumerate(image_keys):
            image = load_image(key)
            sim[i] = [_pair_out(scorer.score_pairs([image], [t]), 1, scorer)[0] for t in texts]
        return sim, sim, mode
    k = k_test or _k_test(scorer, EngineOptions())
    i2t = np.full((n_img, n_txt), RERANK_FILL, dtype=np.float32)
    t2i = np.full((n_img, n_txt), RERANK_FILL, dtype=np.float32)
    for i, key in enumerate(image_keys):
        top = np.argsort(-sim[i], kind="stable")[:k]
        image = load_image(key)
        i2t[i, top] = _pair_out(scorer.score_pairs([image] * len(top), [texts[j] for j in top]), len(top), scorer)
    for j, text in enumerate(texts):
        top = np.argsort(-sim[:, j], kind="stable")[:k]
        t2i[top, j] = _pair_out(scorer.score_pairs([load_image(image_keys[i]) for i in top], [text] * len(top)),
                                len(top), scorer)
    return i2t, t2i, mode


# --------------------------------------------------------------------------- tasks


def text_pair_cosines(scorer: Any, captions: Sequence[Sequence[str]], pairs: Mapping[str, tuple[int, int]], *,
                      options: EngineOptions | None = None, cache: FeatureCache | None = None,
                      naive: bool = False) -> dict[str, np.ndarray]:
    """``{name: [N]}``: cosine of each item's captions ``i`` and ``j`` under the scorer's text features (a cross
    scorer's dual view; NaN when it has none). Batched: every unique caption encoded once; naive: per item."""
    if not pairs:
        return {}
    dual = scorer if _kind(scorer) == "dual" else (scorer.dual_view() if hasattr(scorer, "dual_view") else None)
    if dual is None:
        return {name: np.full(len(captions), np.nan) for name in pairs}
    if dual is not scorer:
        cache = None
    out = {}
    for name, (i, j) in pairs.items():
        a, b = [c[i] for c in captions], [c[j] for c in captions]
        if naive:
            fa = torch.cat([_features(dual.encode_texts([t]), 1, "encode_texts", dual) for t in a])
            fb = torch.cat([_features(dual.encode_texts([t]), 1, "encode_texts", dual) for t in b])
        else:
            chunk = (options or EngineOptions()).text_chunk
            fa, fb = (encode_unique_texts(dual, t, chunk=chunk, cache=cache) for t in (a, b))
        cos = (fa * fb).sum(dim=1).numpy().astype(np.float64)
        cos[np.array(a, dtype=object) == np.array(b, dtype=object)] = 1.0  # the same string: 1 by definition
        out[name] = cos
    return out


def classifier_weights(scorer: Any, task: ClassificationTask, prompt_set: str, *, chunk: int = 256,
                       cache: FeatureCache | None = None, naive: bool = False) -> torch.Tensor:
    """``[C, D]`` zero-shot classifier of one prompt set: per class the prompts' normalised features averaged
    and re-normalised (CLIP's prompt ensembling; open_clip ``build_zero_shot_classifier``)."""
    prompts = task.prompts(prompt_set)
    n_t = len(prompts[0])
    if naive:  # one call per class, as the reference builds its classifier
        f = torch.stack([_features(scorer.encode_texts(row), n_t, "encode_texts", scorer) for row in prompts])
    else:
        flat = [p for row in prompts for p in row]
        f = encode_unique_texts(scorer, flat, chunk=chunk, cache=cache).view(len(prompts), n_t, -1)
    return torch.nn.functional.normalize(torch.nn.functional.normalize(f, dim=-1).mean(dim=1), dim=-1)


def classification_logits(scorer: Any, task: ClassificationTask, options: EngineOptions | None = None, *,
                          cache: FeatureCache | None = None, naive: bool = False) -> dict[str, np.ndarray]:
    """``{prompt set: [N, C]}`` cosines of every image with every class (dual scorers only)."""
    if _kind(scorer) != "dual":
        raise ValueError(f"{task.name}: zero-shot classification needs a dual scorer, "
                         f"{getattr(scorer, 'name', scorer)!r} is a cross scorer")
    options = options or EngineOptions()
    if naive:
        fi = torch.cat([_features(scorer.encode_images([task.load_image(k)]), 1, "encode_images", scorer)
                        for k in task.image_keys])
    else:
        uimg, idx = _index(task.image_keys)
        fi = encode_unique_images(scorer, uimg, task.load_image, chunk=options.image_chunk,
                                  cache=cache, pixel_cache_mb=options.pixel_cache_mb)[torch.from_numpy(idx)]
    return {ps: (fi @ classifier_weights(scorer, task, ps, chunk=options.text_chunk, cache=cache,
                                          naive=naive).T).numpy()
            for ps in task.templates}


def _run_task(scorer: Any, task: Task, options: EngineOptions, cache: FeatureCache | None,
              naive: bool, k_test: int | None = None) -> dict[str, pd.DataFrame]:
    if task.scorer_view is not None:
        base_cache, scorer = cache, task.scorer_view(scorer)
        cache = None  # perturbed image features are not the scorer's own
        if not naive and base_cache is not None and getattr(scorer, "base", None) is base_cache.scorer:
            # an image perturbation leaves texts as they are; its views share the preprocessed images
            cache = FeatureCache(scorer, texts=base_cache.texts, pixels=base_cache.pixels)
    if cache is None and not naive and _kind(scorer) == "dual":
        cache = FeatureCache(scorer)  # within a task: controls and text pairs reuse the task's own features
    if isinstance(task, RetrievalTask):
        if naive:
            i2t, t2i, _ = naive_retrieval_scores(scorer, task.image_keys, task.texts, task.load_image, k_test=k_test)
        else:
            i2t, t2i, _ = retrieval_scores(scorer, task.image_keys, task.texts, task.load_image, options, cache=cache)
        return task.finish(task.image_meta, task.text_meta, i2t, t2i)
    if isinstance(task, ClassificationTask):
        return task.finish(task.meta, classification_logits(scorer, task, options, cache=cache, naive=naive))

    def choices(keys: Sequence[Hashable]) -> np.ndarray:
        if naive:
            return naive_choice_scores(scorer, keys, task.captions, task.load_image, text_calls=task.naive_text_calls)
        return score_choices(scorer, keys, task.captions, task.load_image, options, cache=cache)

    scores = choices(task.image_keys)
    if not task.controls and not task.text_pairs:
        return task.finish(task.meta, scores)
    extras = {name: choices(keys) for name, keys in task.controls.items()}
    extras |= text_pair_cosines(scorer, task.captions, task.text_pairs, options=options, cache=cache, naive=naive)
    return task.finish(task.meta, scores, extras)


def _concat(parts: list[dict[str, pd.DataFrame]]) -> dict[str, pd.DataFrame]:
    """Tables of several tasks; tables of the same name are concatenated in task order."""
    out: dict[str, list[pd.DataFrame]] = {}
    for tables in parts:
        for name, df in tables.items():
            out.setdefault(name, []).append(df)
    return {n: dfs[0] if len(dfs) == 1 else pd.concat(dfs, ignore_index=True) for n, dfs in out.items()}


def as_tasks(prepared: Task | Sequence[Task]) -> list[Task]:
    """A benchmark prepares one task or several (ARO retrieval: the clean task and each shuffle)."""
    tasks = list(prepared) if isinstance(prepared, list | tuple) else [prepared]
    if not tasks:
        raise ValueError("a benchmark prepared no task")
    return tasks


def score_task(scorer: Any, task: Task | Sequence[Task], options: EngineOptions | None = None, *,
               cache: FeatureCache | None = None) -> dict[str, pd.DataFrame]:
    """Per-item tables of one prepared task (or of several, tables of one name concatenated), batched."""
    options = options or EngineOptions()
    tasks = as_tasks(task)
    if options.check_images:
        for t in tasks:
            check_image_files(t.image_keys, t.image_file, t.load_image, t.name)
    return _concat([_run_task(scorer, t, options, cache, naive=False) for t in tasks])


def naive_task(scorer: Any, task: Task | Sequence[Task], *, k_test: int | None = None) -> dict[str, pd.DataFrame]:
    """Per-item tables of one prepared task (or several), scored one item at a time (the parity reference)."""
    return _concat([_run_task(scorer, t, EngineOptions(), None, naive=True, k_test=k_test) for t in as_tasks(task)])


def first_by_key(keys: Sequence[Hashable], records: Sequence[Any]) -> Mapping[Hashable, Any]:
    """The first record of every image key (what a lazy loader opens, and whose id its errors name)."""
    out: dict[Hashable, Any] = {}
    for k, r in zip(keys, records, strict=True):
        out.setdefault(k, r)
    return out

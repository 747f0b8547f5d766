"""CC-Neg's released annotations (``ccneg_dataset/ccneg_preprocessed.pt``; refcode catalog §2.2, §2.4; conclip
catalog §2.1, §2.2, §5) and its scoring rules.

Format. A ``torch.save``'d dict (read with ``torch.load(weights_only=True)``: plain lists, dicts, str, int;
``trust_pickle=True`` allows other pickled objects):

- ``image_paths``: list of str, absolute paths starting with ``/workspace/datasets/cc3m/`` (the reference
  rewrites that prefix to its image root; :meth:`CCNegCase.image_file` does the same);
- ``annotations``: a parallel list of dicts; ``ann["json"]["caption"]`` is the true caption and
  ``ann["sop_data"]["negative-prompt"]`` the negated one. Other keys are ignored;
- ``num_ops``: dict ``K -> list of sample indices`` with K predicate-object pairs (``data["num_ops"][K]`` in
  the reference). Keys may be ints or digit strings.

Records have no ids; a record is its position. Checks: the three keys and their types, equal lengths,
non-empty captions and paths, **no image path twice** (one triplet per image; ``unique_images=False`` turns
this off), every ``num_ops`` index in range and under one K only. A sample under no K gets ``k=None`` (the
paper's per-word/K tables cover 39,912 of the 40,000 eval samples; conclip catalog AMBIGUOUS).

Split (positional): the last :data:`EVAL_SIZE` = 40,000 records are the evaluation set (:func:`eval_split`);
the first 188,246 are for fine-tuning. Table 2 uses all 228,246.

Scoring. Correct iff ``score(I, c) > score(I, c')``; the paper counts a tie wrong (:data:`PAPER_TIE_RULE`,
the default). The released code takes ``argmax`` over ``[c, c']`` with the true caption first, so a tie
counts right there (:data:`CODE_TIE_RULE`). The model sees the negated caption with commas deleted
(:attr:`CCNegCase.negated_for_model`); the true caption is used as is.

Breakdowns (:func:`accuracies`): by K (from ``num_ops``) and by negation word. A sample is in word ``w``'s
subset iff ``" " + w + " "`` occurs in ``" " + c' + " "`` on the **raw** ``negative-prompt`` (commas kept,
case-sensitive), exactly as ``eval_ccneg_no_not_without.py``. The reference runs once per word, so a caption
holding two negation words is counted in both subsets (we do the same); one with none is in no subset.

Writing (:func:`write_ccneg`, used by the toy twin): the same dict, checked by :func:`parse_ccneg` before it is
written, so a written file always loads. :func:`ccneg_annotation` builds one annotation with the fields the
catalog names (``json.caption``, ``sop_data.negative-prompt``, ``sop_data.sop_decomposition.subject``,
``sop_data.sop_chosen_object``, ``sop_data.exclusion-prompt``); :func:`released_image_path` the absolute
``/workspace/datasets/cc3m/...`` path of an image stored under the images root.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..io import atomic_path
from ..metrics.aro import TieRule
from .records import RecordError, field, open_image, pairwise_correct, text, where

#: Size of the held-out evaluation split: the last 40,000 records (``configs.num_ccneg_eval_samples``).
EVAL_SIZE = 40_000
NEGATION_WORDS = ("no", "not", "without")
#: Prefix of the released ``image_paths`` that the reference rewrites to its image root.
IMAGE_PREFIX = "/workspace/datasets/cc3m/"
#: The paper (Sec. 3.2): ``phi(I, c) <= phi(I, c')`` is wrong, so a tie is wrong.
PAPER_TIE_RULE = TieRule.TIE_COUNTS_WRONG
#: The released code: ``argmax([phi(I, c), phi(I, c')]) == 0``, so a tie is right.
CODE_TIE_RULE = TieRule.TIE_COUNTS_RIGHT


@dataclass(frozen=True)
class CCNegCase:
    index: int  # position in the released file
    image_path: str  # as released (absolute, /workspace/datasets/cc3m/...)
    caption: str
    negated_caption: str  # raw ``negative-prompt``
    k: int | None  # number of predicate-object pairs (num_ops), None if listed under no K

    @property
    def negated_for_model(self) -> str:
        """The negated caption as the reference tokenises it (commas deleted)."""
        return self.negated_caption.replace(",", "")

    @property
    def words(self) -> tuple[str, ...]:
        """The negation words whose subset this sample belongs to (raw caption, whole-word, case-sensitive)."""
        padded = f" {self.negated_caption} "
        return tuple(w for w in NEGATION_WORDS if f" {w} " in padded)

    def image_file(self, root: str | Path) -> Path:
        """The image under ``root``: the released path with :data:`IMAGE_PREFIX` replaced by ``root``."""
        rel = self.image_path[len(IMAGE_PREFIX):] if self.image_path.startswith(IMAGE_PREFIX) else self.image_path
        return Path(root) / rel.lstrip("/")

    def open_image(self, root: str | Path, source: str | Path = ""):
        return open_image(self.image_file(root), where(source, self.index))


def _k_of(num_ops: Any, n: int, path: Path) -> dict[int, int]:
    if not isinstance(num_ops, dict):
        raise RecordError(f"{path}: 'num_ops' must be a dict K -> list of indices, got {type(num_ops).__name__}")
    k_of: dict[int, int] = {}
    for key, indices in num_ops.items():
        if isinstance(key, str) and key.isdigit():
            k = int(key)
        elif isinstance(key, int) and not isinstance(key, bool):
            k = key
        else:
            raise RecordError(f"{path}: 'num_ops' key {key!r} is not a number of predicate-object pairs")
        if not isinstance(indices, list | tuple):
            raise RecordError(f"{path}: 'num_ops'[{key!r}] must be a list of indices, got {type(indices).__name__}")
        for idx in indices:
            if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < n:
                raise RecordError(f"{path}: 'num_ops'[{key!r}] lists {idx!r}, not a record index in 0..{n - 1}")
            if idx in k_of:
                raise RecordError(f"{where(path, idx)}: listed under num_ops K={k_of[idx]} and K={k}")
            k_of[idx] = k
    return k_of


def parse_ccneg(data: Any, path: str | Path, *, unique_images: bool = True) -> list[CCNegCase]:
    """Validate the released dict (already loaded) and return its cases in file order."""
    path = Path(path)
    if not isinstance(data, dict):
        raise RecordError(f"{path}: expected a dict with image_paths, annotations, num_ops, got {type(data).__name__}")
    for key in ("image_paths", "annotations", "num_ops"):
        if key not in data:
            raise RecordError(f"{path}: missing key {key!r}")
    paths, annotations = data["image_paths"], data["annotations"]
    for key, value in (("image_paths", paths), ("annotations", annotations)):
        if not isinstance(value, list | tuple):
            raise RecordError(f"{path}: {key!r} must be a list, got {type(value).__name__}")
    if len(paths) != len(annotations):
        raise RecordError(f"{path}: record {min(len(paths), len(annotations))}: 'image_paths' has {len(paths)} "
                          f"entries but 'annotations' has {len(annotations)}")
    if not paths:
        raise RecordError(f"{path}: no records")
    k_of = _k_of(data["num_ops"], len(paths), path)
    seen: dict[str, int] = {}
    cases = []
    for i, (image, ann) in enumerate(zip(paths, annotations, strict=True)):
        at = where(path, i)
        if not isinstance(image, str) or not image.strip():
            raise RecordError(f"{at}: image path must be a non-empty string, got {image!r:.80}")
        if unique_images:
            if image in seen:
                raise RecordError(f"{at}: duplicate image path {image!r} (also record {seen[image]})")
            seen[image] = i
        caption = text(field(ann, "json", dict, at), "caption", f"{at}: field 'json'")
        negated = text(field(ann, "sop_data", dict, at), "negative-prompt", f"{at}: field 'sop_data'")
        if not negated.replace(",", "").strip():
            raise RecordError(f"{at}: field 'sop_data': field 'negative-prompt' is empty once commas are deleted")
        cases.append(CCNegCase(i, image, caption, negated, k_of.get(i)))
    return cases


def load_ccneg(path: str | Path, *, unique_images: bool = True, trust_pickle: bool = False) -> list[CCNegCase]:
    """Read ``ccneg_preprocessed.pt`` and validate it. By default no pickled code is run
    (``weights_only=True``: plain containers only); ``trust_pickle=True`` lifts that for a file you trust."""
    import torch

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    try:
        data = torch.load(path, map_location="cpu", weights_only=not trust_pickle)
    except (RuntimeError, EOFError, ValueError, OSError, pickle.UnpicklingError) as e:
        raise RecordError(f"{path}: not a readable torch file, truncated or corrupt "
                          f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
    return parse_ccneg(data, path, unique_images=unique_images)


def released_image_path(relative: str | Path) -> str:
    """The released form of an image stored at ``<images root>/<relative>``: :data:`IMAGE_PREFIX` + ``relative``
    (the inverse of :meth:`CCNegCase.image_file`)."""
    rel = Path(relative).as_posix().lstrip("/")
    if not rel or rel == ".":
        raise ValueError(f"image path {relative!r} is empty")
    return IMAGE_PREFIX + rel


def ccneg_annotation(caption: str, negated_caption: str, *, subject: str | None = None,
                     chosen_object: str | None = None, exclusion_prompt: str | None = None) -> dict[str, Any]:
    """One released annotation: ``{"json": {"caption"}, "sop_data": {"negative-prompt", ...}}``. The optional
    fields of the PaLM-2 parse are written only when given (``sop_decomposition.subject``,
    ``sop_chosen_object``, ``exclusion-prompt``)."""
    sop: dict[str, Any] = {"negative-prompt": negated_caption}
    if subject is not None:
        sop["sop_decomposition"] = {"subject": subject}
    if chosen_object is not None:
        sop["sop_chosen_object"] = chosen_object
    if exclusion_prompt is not None:
        sop["exclusion-prompt"] = exclusion_prompt
    return {"json": {"caption": caption}, "sop_data": sop}


def write_ccneg(path: str | Path, image_paths: Sequence[str], annotations: Sequence[Mapping[str, Any]],
                num_ops: Mapping[int, Sequence[int]], *, unique_images: bool = True) -> Path:
    """Write ``ccneg_preprocessed.pt`` (``torch.save`` of ``{"image_paths", "annotations", "num_ops"}``, plain
    lists, dicts, str and int only, so ``torch.load(weights_only=True)`` reads it). The dict is checked by
    :func:`parse_ccneg` first: a file this writes always loads. Same arguments, same bytes."""
    import torch

    path = Path(path)
    data = {
        "image_paths": [str(p) for p in image_paths],
        "annotations": [_plain(a) for a in annotations],
        "num_ops": {int(k): [int(i) for i in num_ops[k]] for k in sorted(num_ops, key=int)},
    }
    parse_ccneg(data, path, unique_images=unique_images)
    # Serialised in memory: torch names the zip's top folder after the file, and the atomic write goes through a
    # randomly named temporary file, which would otherwise make the bytes differ between two runs.
    buf = io.BytesIO()
    torch.save(data, buf)
    with atomic_path(path) as tmp:
        tmp.write_bytes(buf.getvalue())
    return path


def _plain(value: Any) -> Any:
    """A copy made of dict / list / str / int only (what ``weights_only=True`` accepts and JSON can show)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    raise TypeError(f"annotation value of type {type(value).__name__} cannot be written ({value!r:.80})")


def eval_split(cases: Sequence[CCNegCase], n_eval: int = EVAL_SIZE) -> list[CCNegCase]:
    """The held-out evaluation set: the last ``n_eval`` records (positional, as the reference)."""
    if n_eval < 1:
        raise ValueError(f"n_eval must be >= 1, got {n_eval}")
    if len(cases) < n_eval:
        raise ValueError(f"only {len(cases)} records, fewer than the {n_eval} evaluation samples")
    return list(cases[-n_eval:])


def correct(pos_scores: np.ndarray, neg_scores: np.ndarray,
            tie_rule: TieRule | str = PAPER_TIE_RULE) -> np.ndarray:
    """Per sample: ``score(I, c) > score(I, c')`` (paper; a tie is wrong) or ``>=`` (``CODE_TIE_RULE``)."""
    tie_rule = TieRule(tie_rule)
    return pairwise_correct(pos_scores, neg_scores, names="true and negated",
                            ties_win=tie_rule is not TieRule.TIE_COUNTS_WRONG)


def _groups(cases: Sequence[CCNegCase]) -> dict[str, np.ndarray]:
    """Boolean masks ``[N]``: ``k/<K>`` for every K present, ``word/<w>`` for every word with a sample and
    ``word/<w>/k/<K>`` for every non-empty cell (the paper's Tables 7-9)."""
    ks = np.array([-1 if c.k is None else c.k for c in cases])
    by_k = {k: ks == k for k in sorted(set(ks.tolist()) - {-1})}
    masks = {f"k/{k}": m for k, m in by_k.items()}
    for w in NEGATION_WORDS:
        word = np.array([w in c.words for c in cases], dtype=bool)
        if word.any():
            masks[f"word/{w}"] = word
            masks.update({f"word/{w}/k/{k}": word & m for k, m in by_k.items() if (word & m).any()})
    return masks


def accuracies(correct_mask: np.ndarray, cases: Sequence[CCNegCase]) -> dict[str, float]:
    """``overall`` accuracy, plus ``k/<K>`` (by number of predicate-object pairs), ``word/<w>`` (by negation
    word) and ``word/<w>/k/<K>`` for every subset that has samples. ``correct_mask[i]`` belongs to
    ``cases[i]``."""
    c = np.asarray(correct_mask, dtype=bool)
    if c.ndim != 1 or c.shape[0] != len(cases):
        raise ValueError(f"correct must be 1-D with one entry per case, got {c.shape} for {len(cases)} cases")
    if c.size == 0:
        raise ValueError("no cases")
    out = {"overall": float(c.mean())}
    out.update({name: float(c[mask].mean()) for name, mask in _groups(cases).items()})
    return out


def subset_sizes(cases: Sequence[CCNegCase]) -> dict[str, int]:
    """Number of samples behind each key of :func:`accuracies` (the paper prints them next to K)."""
    return {"overall": len(cases), **{name: int(mask.sum()) for name, mask in _groups(cases).items()}}

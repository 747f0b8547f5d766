"""The TSVLC losses (Doveh et al., "Teaching Structured Vision&Language Concepts to Vision&Language Models",
CVPR 2023, §3.2 Eqs. 2-6, and the authors' open_clip fork; catalog ``/work/shared/papers/tsvlc.md`` §3.2, §5).

Blocks: the image rows ``I [N, D]`` (every image block, :meth:`Features.image_rows`), ``captions`` ``T [N, D]``
(caption i of image row i), optionally ``negatives`` (grouped ``[R, K, D]`` with a validity mask ``[R, K]``, or
plain ``[R, D]``; each row owned by an image row; a caption with no negative is a masked slot) and optionally
``positives`` ``P`` (the analogies T_i^sim: ``[N, 1, D]`` with an optional mask ``[N, 1]``, or plain ``[N, D]``;
positive i owned by image row i). ``s`` is ``f.logit_scale`` (already ``exp`` of the learned parameter).

Terms (every cross-entropy a mean over its rows):

- ``contrastive_loss`` (Eq. 2, with the missing minus sign): ``½ (CE_i2t + CE_t2i)`` over the N rows.
  ``CE_i2t`` is over the rows of ``s · I Tᵀ``, ``CE_t2i`` over the rows of ``s · T Iᵀ``, labels ``arange(N)``.
  With ``negatives_in_contrastive=True`` the valid negatives are appended as extra text columns of the
  image→text logits (``s · I [T; negatives flattened]ᵀ``; masked slots excluded from the softmax), the NegCLIP
  layout (:mod:`vlcomp.losses.negclip`); text→image stays over the N captions. The default False is the
  reference's effective 4-GPU behaviour: its ``gather_features`` slices the negatives out of an already
  truncated tensor, so they never reach L_cont (catalog §3.2, §5.5). True with ``negatives_loss=False`` is
  Table 2's "w/o Neg Loss" row.
- ``negatives_loss`` (Eq. 3; only with ``negatives_loss=True`` and a ``negatives`` block): for every image row i
  with at least one valid negative, ``-log softmax(s · [cos(I_i, T_i), cos(I_i, T_i^neg_1), ...])[0]`` over its
  own caption and *all* the valid negatives it owns (for K = 1, one negative per caption, this is exactly Eq. 3's
  two-way softmax; for K > 1, or several negative rows owned by one image row, it is the natural extension to one
  softmax over the caption and all of its negatives); the mean over those rows. Rows with no valid negative take
  no part (catalog §5.4: L_neg covers only the samples that have a negative). When no row of the batch has a
  valid negative the term is an exact zero that still depends on the graph (``0 ·`` the sum of the finite
  negative logits), so ``backward()`` works and the trainer's sum keeps one shape.
- ``analogy_loss`` (Eqs. 4-5; only with a ``positives`` block), over the rows with a valid positive only (a masked
  row leaves both the rows and the columns of the logits), labels ``arange``:

  * ``analogy_direction="repo"`` (default, the reference's ``get_loss_pos_only`` without ``--symmetric``):
    ``½ (CE(s · I Pᵀ) + CE(s · T Pᵀ))``: for each image, and for each original caption, a softmax over the
    batch's positives.
  * ``analogy_direction="paper"``: ``½ (CE(s · P Tᵀ) + CE(s · P Iᵀ))``: Eq. 4 (each positive normalised over the
    batch's original texts) plus Eq. 5 as printed (each positive normalised over the batch's images).

  AMBIGUOUS (catalog §3.2, §5.2): the paper's prose says Eq. 5 is "the second summand of L_cont with T_i replaced
  by T_i^sim" (a softmax over texts), its formula normalises over images, and the repo normalises over the
  positives. "repo" is the default because it is what produced the published numbers; keep one choice across
  the runs that are compared. When no row has a valid positive the term is a graph-dependent exact zero, as
  for ``negatives_loss``.
- diagnostic ``negative_acc`` (when a ``negatives`` block exists and at least one negative is valid; otherwise
  absent, never NaN): the share of valid negatives whose logit with their owner image is strictly below that of
  the owner's caption. Detached.

Weights (Eq. 6): α and β are not given in the paper. The reference computes
``total = (CE_i2t + CE_t2i)/2 + neg_w · CE_neg + (CE_img→pos + CE_text→pos)/2`` with ``neg_w = 1`` and every CE a
batch mean, which is exactly ``contrastive_loss + 1 · negatives_loss + 1 · analogy_loss`` with the terms above
(in the paper's sum notation: contrastive weight ½, α = 1, β = ½). No weights are applied here; a method config
scales terms with its ``loss_weights`` elsewhere.

``cyclic`` (λ₁, λ₂), when given, adds CyCLIP's two cyclic-consistency terms over the image rows and their captions
(:func:`vlcomp.losses.cyclip.cyclic_terms`): TSVLC on CyCLIP (Table 1e-f) adds "all extra CyCLIP losses" to Eq. 6.

Deviation (catalog §5.6): the reference's L_neg and L_pos are local to each GPU (128 rows) while L_cont is
global; here every term sees the global batch. L_neg is per row, so only its averaging can differ; the analogy
softmax runs over the global batch's positives.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..train.batch import Features
from . import LOSSES
from .clip import image_captions
from .cyclip import check_weights, cyclic_terms

DIRECTIONS = ("repo", "paper")


@LOSSES.register("tsvlc")
class TsvlcLoss(nn.Module):
    def __init__(self, negatives_in_contrastive: bool = False, negatives_loss: bool = True,
                 analogy_direction: str = "repo", cyclic: list | tuple | None = None) -> None:
        super().__init__()
        if analogy_direction not in DIRECTIONS:
            raise ValueError(f"tsvlc loss: analogy_direction={analogy_direction!r}; expected one of {DIRECTIONS}")
        self.negatives_in_contrastive = bool(negatives_in_contrastive)
        self.negatives_loss = bool(negatives_loss)
        self.analogy_direction = analogy_direction
        self.cyclic = None if cyclic is None else check_weights(cyclic, "tsvlc")

    def extra_repr(self) -> str:
        return (f"negatives_in_contrastive={self.negatives_in_contrastive}, negatives_loss={self.negatives_loss}, "
                f"analogy_direction={self.analogy_direction!r}, cyclic={self.cyclic}")

    def forward(self, f: Features) -> dict[str, torch.Tensor]:
        images, captions = image_captions(f, "tsvlc")
        n, d = images.shape
        scale = f.logit_scale
        negatives = _negatives(f, d)
        positives = _positives(f, n, d)
        labels = torch.arange(n, device=images.device)

        # contrastive: image->text over [captions; valid negatives] or the captions alone, text->image over images
        logits_per_image = scale * images @ captions.T  # [N, N]
        logits_per_text = logits_per_image.T
        if negatives is not None and self.negatives_in_contrastive:
            negs, _, valid = negatives
            neg_cols = scale * images @ negs.T  # [N, R*K]
            if valid is not None:
                neg_cols = neg_cols.masked_fill(~valid, float("-inf"))
            logits_per_image = torch.cat([logits_per_image, neg_cols], dim=1)
        out = {"contrastive_loss": 0.5 * (F.cross_entropy(logits_per_image, labels)
                                          + F.cross_entropy(logits_per_text, labels))}

        if negatives is not None:
            negs, neg_owner, valid = negatives
            own = scale * (images * captions).sum(-1)  # [N]: s cos(I_i, T_i)
            neg = scale * (images[neg_owner] * negs).sum(-1)  # [R*K]: s cos(I_owner, T^neg)
            ok = torch.ones_like(neg_owner, dtype=torch.bool) if valid is None else valid
            if self.negatives_loss:
                out["negatives_loss"] = _negatives_term(own, neg, neg_owner, ok)
            if bool(ok.any()):
                out["negative_acc"] = (neg[ok] < own[neg_owner[ok]]).float().mean().detach()

        if positives is not None:
            pos, valid = positives
            out["analogy_loss"] = self._analogy(scale, images, captions, pos, valid)
        if self.cyclic is not None:
            out |= cyclic_terms(images, captions, self.cyclic)
        return out

    def _analogy(self, scale: torch.Tensor, images: torch.Tensor, captions: torch.Tensor, pos: torch.Tensor,
                 valid: torch.Tensor | None) -> torch.Tensor:
        if valid is not None:
            if not bool(valid.any()):
                return 0.0 * (scale * (images * pos).sum())
            images, captions, pos = images[valid], captions[valid], pos[valid]
        labels = torch.arange(images.shape[0], device=images.device)
        if self.analogy_direction == "repo":  # each image / caption: a softmax over the positives
            a, b = scale * images @ pos.T, scale * captions @ pos.T
        else:  # each positive: a softmax over the original texts (Eq. 4) and over the images (Eq. 5)
            a, b = scale * pos @ captions.T, scale * pos @ images.T
        return 0.5 * (F.cross_entropy(a, labels) + F.cross_entropy(b, labels))


def _negatives_term(own: torch.Tensor, neg: torch.Tensor, neg_owner: torch.Tensor, ok: torch.Tensor
                    ) -> torch.Tensor:
    """Mean over image rows with a valid negative of ``-log softmax([own_i, valid negatives owned by i])[0]``."""
    n, m = own.shape[0], neg.shape[0]
    if not bool(ok.any()):
        return 0.0 * neg.sum()  # exact zero, still attached to the graph
    # [N, 1 + M]: own logit, then every negative in its owner's row (-inf elsewhere and for masked slots)
    slots = torch.full((n, m), float("-inf"), dtype=neg.dtype, device=neg.device)
    slots[neg_owner, torch.arange(m, device=neg.device)] = neg.masked_fill(~ok, float("-inf"))
    logits = torch.cat([own[:, None], slots], dim=1)
    has = torch.zeros(n, dtype=torch.bool, device=own.device)
    has[neg_owner[ok]] = True
    zeros = torch.zeros(int(has.sum()), dtype=torch.long, device=own.device)
    return F.cross_entropy(logits[has], zeros)


def _negatives(f: Features, d: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None] | None:
    """``(features [R*K, D], owner [R*K], valid [R*K] or None)`` of the ``negatives`` block, or None."""
    if "negatives" not in f.texts:
        return None
    t = f.texts["negatives"]
    if t.ndim not in (2, 3) or t.shape[-1] != d:
        raise ValueError(f"tsvlc loss: text block 'negatives' must be [rows, K, {d}] or [rows, {d}], "
                         f"got {tuple(t.shape)}")
    return f.flat("negatives")


def _positives(f: Features, n: int, d: int) -> tuple[torch.Tensor, torch.Tensor | None] | None:
    """``(features [N, D], valid [N] or None)`` of the ``positives`` block (positive i of image row i), or None."""
    if "positives" not in f.texts:
        return None
    t = f.texts["positives"]
    if not ((t.ndim == 2 and t.shape == (n, d)) or (t.ndim == 3 and t.shape == (n, 1, d))):
        raise ValueError(f"tsvlc loss: text block 'positives' must be [{n}, 1, {d}] or [{n}, {d}] (one positive "
                         f"per image row), got {tuple(t.shape)}")
    pos, owner, valid = f.flat("positives")
    if not torch.equal(owner, torch.arange(n, device=owner.device)):
        raise ValueError("tsvlc loss: text block 'positives': positive i must belong to image row i")
    return pos, valid

"""Batched encoding: every unique image and caption is encoded once per model; the training forward pass and its
opt-in speed options (text length buckets, bfloat16 towers)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

import numpy as np
import torch

from .factory import image_size, to_tensor


def _trimmable(model: torch.nn.Module, tokens: torch.Tensor) -> bool:
    """True for open_clip's CLIP text tower with a causal mask and EOT/EOS pooling: there, the features of a
    sequence do not depend on the padding after it, so the batch can be cut to its longest sequence."""
    return (
        hasattr(model, "token_embedding") and hasattr(model, "transformer") and hasattr(model, "ln_final")
        and getattr(model, "attn_mask", None) is not None
        and getattr(model, "text_pool_type", None) in ("argmax", "eos")
        and tokens.shape[1] == model.positional_embedding.shape[0]
    )


def encode_text_tokens(model: torch.nn.Module, tokens: torch.Tensor, *, normalize: bool = False,
                       pad_id: int = 0) -> torch.Tensor:
    """``model.encode_text(tokens)`` computed on the tokens cut after the batch's last non-pad position.

    Exact for open_clip's causal text towers (token i attends only to tokens <= i, and the pooled token is the
    EOT, inside every sequence), so it is ~2x cheaper on short captions padded to a long context; any other
    text tower falls back to ``model.encode_text``. Mirrors open_clip 3.x ``CLIP.encode_text``.
    """
    if not _trimmable(model, tokens):
        return model.encode_text(tokens, normalize=normalize)
    used = tokens.ne(pad_id).any(dim=0).nonzero()
    n = int(used.max()) + 1 if len(used) else 1
    t = tokens[:, :n]
    from open_clip.transformer import text_global_pool

    cast_dtype = model.transformer.get_cast_dtype()
    x = model.token_embedding(t).to(cast_dtype) + model.positional_embedding[:n].to(cast_dtype)
    x = model.transformer(x, attn_mask=model.attn_mask[:n, :n])
    x = model.ln_final(x)
    x = text_global_pool(x, t, model.text_pool_type, eos_token_id=getattr(model, "text_eos_id", None))
    if model.text_projection is not None:
        x = model.text_projection(x) if isinstance(model.text_projection, torch.nn.Linear) else x @ model.text_projection
    return torch.nn.functional.normalize(x, dim=-1) if normalize else x


#: ``precision`` of :func:`clip_forward`: float32 everywhere, or both towers under bfloat16 autocast.
PRECISIONS = ("fp32", "bf16")


def text_lengths(tokens: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """long ``[N]``: each row's length up to and including its last non-pad token (what trimming keeps of it)."""
    pos = torch.arange(1, tokens.shape[1] + 1, device=tokens.device)  # [ctx]
    return (tokens.ne(pad_id) * pos).amax(dim=1)


def length_buckets(lengths: torch.Tensor, k: int) -> list[torch.Tensor]:
    """Row indices of at most ``k`` groups of similar length that minimise the tokens a trimmed encoder computes,
    sum over groups of (rows x longest row); rows in each group in ascending length (ties: input order).

    Exact dynamic programme over the distinct lengths (at most the context length), so a group boundary never
    splits rows of one length. Deterministic: the same lengths give the same groups."""
    order = torch.argsort(lengths, stable=True)
    values, counts = torch.unique_consecutive(lengths[order], return_counts=True)
    vals, cnt = values.tolist(), counts.tolist()
    v, k = len(vals), max(1, min(k, len(vals)))
    start = [0] + list(np.cumsum(cnt))  # start[i]: first sorted row of distinct length i
    inf = float("inf")
    # cost[j][i]: least tokens for the first i distinct lengths in j groups; cut[j][i]: where its last group starts
    cost = [[inf] * (v + 1) for _ in range(k + 1)]
    cut = [[0] * (v + 1) for _ in range(k + 1)]
    cost[0][0] = 0.0
    for j in range(1, k + 1):
        for i in range(1, v + 1):
            for m in range(j - 1, i):  # last group: distinct lengths m..i-1, its longest is vals[i-1]
                c = cost[j - 1][m] + (start[i] - start[m]) * vals[i - 1]
                if c < cost[j][i]:
                    cost[j][i], cut[j][i] = c, m
    j = min(range(1, k + 1), key=lambda jj: (cost[jj][v], jj))  # fewest groups among the cheapest
    bounds, i = [], v
    while j:
        bounds.append((cut[j][i], i))
        i, j = cut[j][i], j - 1
    return [order[start[a] : start[b]] for a, b in reversed(bounds)]


def encode_text_buckets(model: torch.nn.Module, tokens: torch.Tensor, buckets: int, *, normalize: bool = False,
                        pad_id: int = 0) -> torch.Tensor:
    """:func:`encode_text_tokens` on up to ``buckets`` groups of rows of similar length (:func:`length_buckets`),
    each cut to its own longest row; features back in input order ``[N, D]``.

    Equal to one trimmed batch up to float rounding (each row's features depend only on its own tokens; the
    matmul shapes differ); ``buckets`` <= 1, or a text tower that cannot be trimmed, is one batch."""
    if buckets <= 1 or len(tokens) < 2 or not _trimmable(model, tokens):
        return encode_text_tokens(model, tokens, normalize=normalize, pad_id=pad_id)
    groups = length_buckets(text_lengths(tokens, pad_id), buckets)
    if len(groups) == 1:
        return encode_text_tokens(model, tokens, normalize=normalize, pad_id=pad_id)
    order = torch.cat(groups)  # [N]: row r of the concatenated features is input row order[r]
    feats = torch.cat([encode_text_tokens(model, tokens[g], normalize=normalize, pad_id=pad_id) for g in groups])
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(len(order), device=order.device)
    return feats[inverse]  # [N, D], input order (a gather: gradients flow back to each group)


def tower_precision(precision: str, device_type: str = "cpu") -> contextlib.AbstractContextManager:
    """The context both towers run in: nothing for ``"fp32"``; for ``"bf16"`` torch.autocast to bfloat16 on
    ``device_type``, on the CPU with scaled-dot-product attention forced to the math backend (the fused CPU
    kernel was slower in bfloat16 at these sizes; a GPU keeps its fused kernels)."""
    if precision == "fp32":
        return contextlib.nullcontext()
    if precision != "bf16":
        raise ValueError(f"precision={precision!r}: expected one of {', '.join(PRECISIONS)}")
    from torch.nn.attention import SDPBackend, sdpa_kernel

    stack = contextlib.ExitStack()
    stack.enter_context(torch.autocast(device_type, dtype=torch.bfloat16))
    if device_type == "cpu":
        stack.enter_context(sdpa_kernel(SDPBackend.MATH))
    return stack


def clip_forward(model: torch.nn.Module, images: torch.Tensor, tokens: torch.Tensor, *, text_buckets: int = 0,
                 precision: str = "fp32") -> dict[str, torch.Tensor]:
    """open_clip ``CLIP.forward`` (dict output) with the text batch trimmed as in :func:`encode_text_tokens`.

    Options (training speed; the defaults compute exactly the plain float32 forward pass):

    - ``text_buckets`` k >= 2: the texts encoded in k length groups (:func:`encode_text_buckets`);
    - ``precision="bf16"``: both towers under :func:`tower_precision`; their features are cast to float32 before
      the L2 normalisation, so the loss after them runs in float32.
    """
    if precision == "fp32":
        image = model.encode_image(images, normalize=True)
        text = (encode_text_tokens(model, tokens, normalize=True) if text_buckets <= 1
                else encode_text_buckets(model, tokens, text_buckets, normalize=True))
        out = {"image_features": image, "text_features": text, "logit_scale": model.logit_scale.exp()}
    else:
        with tower_precision(precision, images.device.type):
            image = model.encode_image(images)
            text = encode_text_buckets(model, tokens, text_buckets)
        normalize = torch.nn.functional.normalize
        out = {"image_features": normalize(image.float(), dim=-1), "text_features": normalize(text.float(), dim=-1),
               "logit_scale": model.logit_scale.exp()}
    if getattr(model, "logit_bias", None) is not None:
        out["logit_bias"] = model.logit_bias
    return out


@torch.no_grad()
def encode_images(model: torch.nn.Module, images: np.ndarray | Sequence[np.ndarray], *, batch_size: int = 256,
                  perturb: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor:
    """L2-normalised image features [N, D]. ``images`` is uint8 [N, H, W, 3] or a list of such arrays of any
    size (crops); each is resized to the model's input. ``perturb`` runs on the preprocessed batch (ARO's
    image shuffles act on the model-preprocessed tensor). Batches run on the model's device (the real profile's
    GPU); the features come back on the CPU."""
    model.eval()
    size = image_size(model)
    device = next(model.parameters()).device
    feats = []
    for s in range(0, len(images), batch_size):
        chunk = images[s : s + batch_size]
        if isinstance(chunk, np.ndarray):
            x = to_tensor(chunk, size)
        else:
            x = torch.cat([to_tensor(im[None], size) for im in chunk])  # [b, 3, S, S]
        if perturb is not None:
            x = perturb(x)
        f = model.encode_image(x.to(device))  # on the CPU ``.to`` returns ``x`` itself
        feats.append(torch.nn.functional.normalize(f.float(), dim=-1).cpu())
    return torch.cat(feats) if feats else torch.zeros(0, 0)


@torch.no_grad()
def encode_texts(model: torch.nn.Module, tokenizer, texts: Sequence[str], *, batch_size: int = 1024) -> torch.Tensor:
    """L2-normalised text features [N, D]; duplicate strings are encoded once, in batches of similar length
    (each batch cut to its longest caption, see :func:`encode_text_tokens`)."""
    model.eval()
    device = next(model.parameters()).device
    uniq = sorted(set(texts))
    if not uniq:
        return torch.zeros(0, 0)
    tokens = tokenizer(uniq)  # [U, ctx]
    order = torch.argsort(tokens.ne(0).sum(dim=1), stable=True)
    uniq_feats = torch.empty(0)
    for s in range(0, len(uniq), batch_size):
        rows = order[s : s + batch_size]
        f = torch.nn.functional.normalize(encode_text_tokens(model, tokens[rows].to(device)).float(), dim=-1).cpu()
        if s == 0:
            uniq_feats = torch.empty(len(uniq), f.shape[1])
        uniq_feats[rows] = f
    index = {t: i for i, t in enumerate(uniq)}
    return uniq_feats[[index[t] for t in texts]]

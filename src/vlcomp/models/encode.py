"""Batched encoding: every unique image and caption is encoded once per model."""

from __future__ import annotations

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


def clip_forward(model: torch.nn.Module, images: torch.Tensor, tokens: torch.Tensor) -> dict[str, torch.Tensor]:
    """open_clip ``CLIP.forward`` (dict output) with the text batch trimmed as in :func:`encode_text_tokens`."""
    out = {"image_features": model.encode_image(images, normalize=True),
           "text_features": encode_text_tokens(model, tokens, normalize=True),
           "logit_scale": model.logit_scale.exp()}
    if getattr(model, "logit_bias", None) is not None:
        out["logit_bias"] = model.logit_bias
    return out


@torch.no_grad()
def encode_images(model: torch.nn.Module, images: np.ndarray | Sequence[np.ndarray], *, batch_size: int = 256,
                  perturb: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor:
    """L2-normalised image features [N, D]. ``images`` is uint8 [N, H, W, 3] or a list of such arrays of any
    size (crops); each is resized to the model's input. ``perturb`` runs on the preprocessed batch (ARO's
    image shuffles act on the model-preprocessed tensor). Batches run on the model's device (the paper profile's
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

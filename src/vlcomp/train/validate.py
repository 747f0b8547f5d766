"""Validation retrieval used for learning-rate selection (NegCLIP: "selected by COCO val retrieval")."""

from __future__ import annotations

import numpy as np
import torch

from ..metrics.retrieval import recall_at_k
from ..models.encode import encode_images, encode_texts


def val_retrieval(model: torch.nn.Module, tokenizer, images: np.ndarray, captions: list[list[str]]) -> dict[str, float]:
    """R@1/R@5 both ways on a held-out split, plus ``mean_recall_at_1`` (the selection score: the paper does not
    say which retrieval metric it selected on, AMBIGUOUS; we take the mean of image→text and text→image R@1)."""
    texts = [c for caps in captions for c in caps]
    text_to_image = np.asarray([i for i, caps in enumerate(captions) for _ in caps])
    fi = encode_images(model, images)
    ft = encode_texts(model, tokenizer, texts)
    metrics = recall_at_k((fi @ ft.T).numpy(), text_to_image, ks=(1, 5))
    metrics["mean_recall_at_1"] = 0.5 * (metrics["i2t/recall_at_1"] + metrics["t2i/recall_at_1"])
    return metrics

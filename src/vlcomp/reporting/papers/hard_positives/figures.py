"""Hard Positives' figures (catalog §4: the paper has no plots, only image cards): HP-F1 (the teaser's score table),
HP-F2 (the REPLACE and SWAP example cards with the set sizes), HP-F3 (the 2 x 2 qualitative score tables) and HP-F4
(random samples), drawn as cards: the item's image from the twin (REPLACE: the whole image; SWAP: cropped to the
pair's box, as scored), and under it its captions, with each model's raw scores where the figure has them.

Everything drawn is a real item of the twin (:func:`load_image`: the evaluation's own image reader,
:class:`vlcomp.formats.hardpos.HardPositiveCase`) and every score one of a model's item table; the items are chosen
by rules stated in :mod:`.scores` (F1 / F3) and :mod:`.toy` (F2: the first item of each part; F4: a seeded draw).
Figures are saved byte-stable by :func:`vlcomp.reporting.render.save_figure`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


@dataclass(frozen=True)
class Card:
    """One card: a title, the image (an RGB array; None: not found, the card says so) and text lines."""

    title: str
    image: np.ndarray | None
    lines: Sequence[str] = field(default_factory=tuple)


def load_image(row: Mapping, hard_positives_dir: str | Path, aro_images: str | Path) -> np.ndarray | None:
    """An item's image as the evaluation reads it (REPLACE whole, relative to the twin root; SWAP cropped to its
    box, relative to ARO's images folder); None when the file is missing."""
    from ....formats.hardpos import HardPositiveCase

    swap = str(row["part"]) == "swap"
    box = tuple(float(row[k]) for k in ("bbox_x", "bbox_y", "bbox_w", "bbox_h")) if swap else None
    case = HardPositiveCase(int(row["index"]), str(row["image_path"]), str(row["caption"]), str(row["positive"]),
                            str(row["negative"]), None if swap else str(row.get("image_id") or ""), box)
    try:
        img = case.open_image(aro_images if swap else hard_positives_dir)
    except FileNotFoundError:
        return None
    return np.asarray(img.convert("RGB"))


def cards_figure(cards: Sequence[Card], columns: int = 2, title: str = "") -> plt.Figure:
    """Cards in a grid: each the image (nearest-neighbour, the toy's pixels as they are) above its text lines."""
    rows = max(1, -(-len(cards) // columns))
    fig = plt.figure(figsize=(4.6 * columns, 4.6 * rows))
    grid = fig.add_gridspec(rows * 2, columns, height_ratios=[3, 2] * rows, hspace=0.15, wspace=0.1)
    for i, card in enumerate(cards):
        r, c = divmod(i, columns)
        ax = fig.add_subplot(grid[2 * r, c])
        if card.image is not None:
            ax.imshow(card.image, interpolation="nearest")
        else:
            ax.text(0.5, 0.5, "image not found", ha="center", va="center", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(card.title, fontsize=9)
        tx = fig.add_subplot(grid[2 * r + 1, c])
        tx.axis("off")
        tx.text(0.0, 1.0, "\n".join(card.lines), va="top", ha="left", fontsize=7.5, family="monospace",
                transform=tx.transAxes)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def score_lines(captions: Sequence[tuple[str, str]], scores: Mapping[str, Sequence[float]],
                width: int = 44) -> list[str]:
    """A score table as text lines: a header with the (short) model names and one row of scores per caption role,
    then each caption in full (cut at ``width``)."""
    models = list(scores)
    out = [f"{'':<5}" + "".join(f"{m[:9]:>10}" for m in models)]
    for i, (role, _) in enumerate(captions):
        out.append(f"{role:<5}" + "".join(f"{scores[m][i]:>10.3f}" for m in models))
    for role, text in captions:
        label = f"{role + ':':<5}{text}"
        out.append(label if len(label) <= width else label[: width - 1] + "…")
    return out


def caption_lines(caption: str, negative: str, positive: str, width: int = 48) -> list[str]:
    """``c`` / ``c_n`` / ``c_p`` as the paper's cards show them (long captions cut)."""
    def cut(t: str) -> str:
        return t if len(t) <= width else t[: width - 1] + "…"

    return [f"c:   {cut(caption)}", f"c_n: {cut(negative)}", f"c_p: {cut(positive)}"]

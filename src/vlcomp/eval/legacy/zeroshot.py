"""Zero-shot classification twins: single-object images labelled by a combination of concepts.

| twin | stands for | label | classes |
|---|---|---|---|
| ``cifar10`` | CIFAR10 (a small label set) | shape | 8 |
| ``cifar100`` | CIFAR100 (a finer label set) | colour + shape | 64 |
| ``imagenet`` | ImageNet (many fine-grained classes) | colour + material + shape | 192 |

Classes are scored CLIP-style: each class name is put in every prompt template, the normalised text features
are averaged and renormalised (prompt ensembling), and the image picks the most similar class. The paper
does not state its protocol (its CLIP numbers match linear probes, AMBIGUOUS); the issue asks for zero-shot.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ...world.concepts import BACKGROUNDS, COLOURS, MATERIALS, SHAPES, SIZES
from ...world.render import render
from ...world.scene import Obj, Scene, WorldConfig

TEMPLATES = ("a photo of a {}.", "a drawing of a {}.", "a {}.", "an image of a {}.")


@dataclass(frozen=True)
class ZeroShotTask:
    name: str
    stands_for: str
    label_attrs: tuple[str, ...]  # attribute names, in caption order, ending with "shape"


ZEROSHOT_TASKS: dict[str, ZeroShotTask] = {
    t.name: t
    for t in (
        ZeroShotTask("cifar10", "CIFAR10", ("shape",)),
        ZeroShotTask("cifar100", "CIFAR100", ("colour", "shape")),
        ZeroShotTask("imagenet", "ImageNet", ("colour", "material", "shape")),
    )
}

_VALUES = {"shape": SHAPES, "colour": tuple(COLOURS), "material": MATERIALS}


def class_names(task: ZeroShotTask) -> list[str]:
    return [" ".join(v) for v in itertools.product(*(_VALUES[a] for a in task.label_attrs))]


def build_zeroshot(task: ZeroShotTask, per_class: int, wcfg: WorldConfig, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Images uint8 [C * per_class, H, W, 3], labels int [N], class names [C]."""
    names = class_names(task)
    s = wcfg.image_size
    images = np.empty((len(names) * per_class, s, s, 3), dtype=np.uint8)
    labels = np.repeat(np.arange(len(names)), per_class)
    for i, label in enumerate(labels):
        values = dict(zip(task.label_attrs, names[label].split(), strict=True))
        size = values.get("size", list(SIZES)[rng.integers(len(SIZES))])
        half = SIZES[size] * wcfg.scale
        obj = Obj(
            0,
            shape=values["shape"],
            colour=values.get("colour", list(COLOURS)[rng.integers(len(COLOURS))]),
            size=size,
            material=values.get("material", MATERIALS[rng.integers(len(MATERIALS))]),
            state="solid",
            x=float(rng.uniform(half + 1, s - half - 1)),
            y=float(rng.uniform(half + 1, s - half - 1)),
            half=half,
            heading=float(rng.uniform(0, 360)) if values["shape"] == "arrow" else 0.0,
        )
        images[i] = render(Scene(f"{task.name}/{i}", list(BACKGROUNDS)[rng.integers(len(BACKGROUNDS))], [obj]), s)
    return images, labels, names

"""Zero-shot classification twins: single-object images labelled by a combination of concepts, written as image
folders (:mod:`vlcomp.formats.imagefolder`) with their class names and prompt templates.

Three suites, one per paper that reports zero-shot classification:

- ``zeroshot_aro`` (ARO Table 6): ``cifar10`` (shape, 8 classes), ``cifar100`` (colour + shape, 64),
  ``imagenet`` (colour + material + shape, 192); four templates ensembled ("a photo of a {c}.", ...).
  The paper does not state its protocol (its CLIP numbers match linear probes, AMBIGUOUS); we run zero-shot.
- ``zeroshot_conclip`` (CoN-CLIP Table 4 / 16): eight tasks standing for ImageNet-1k, CIFAR-10, CIFAR-100,
  Caltech-101, Food-101, Flowers-102, Oxford Pets, Stanford Cars, each a different concept combination; the
  paper's two prompt sets, standard "this is a photo of a {c}" and negated "this is not a photo of a {c}"
  (the Δ metric). AMBIGUOUS (catalog): the released code prompts bare class names; we use the paper's
  templates, which the README figure's CIFAR-10 numbers match.
- ``zeroshot_elevater`` (TSVLC: the mean over ELEVATER's 21 tasks): 21 concept combinations (one to three
  attributes, the background among them), CLIP's 4-template ensemble.

Vocabulary: the full web vocabulary (:meth:`WorldConfig.vocabulary` with ``web=True``), so with
``world.web_only_shapes`` / ``web_only_colours`` set, some classes name a concept that only the web split shows
(CIFAR10 twin: 10 shapes, 2 of them web-only; CIFAR100 twin: 10 colours x 10 shapes = 100 classes). Fine-tuning on
the COCO twin never sees those, as real COCO (80 object classes) never shows most of ImageNet's; the suites write
``class_groups.json`` (``web_only`` / ``coco``) and the benchmark reports accuracy per group.

What the stand-ins share with the real suites is the question they ask - can the model name what it sees from
text alone - not the images: every class is a phrase of the toy vocabulary. Images are drawn from seeded
generators of their own (``np_rng(seed, "benchmarks", "zeroshot", task)`` for the ARO suite, the first toy
pipeline's keys, so its images are the same draws; ``ctx.rng(task)`` for the others).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..formats.imagefolder import label_folder, write_suite
from ..seeding import np_rng
from ..world.concepts import BACKGROUNDS, MATERIALS, SIZES, STATES, WEB_ONLY_COLOURS, WEB_ONLY_SHAPES
from ..world.render import render
from ..world.scene import Obj, Scene, WorldConfig
from . import TWINS, TwinContext, TwinResult, option
from .images import write_png

TEMPLATES = ("a photo of a {c}.", "a drawing of a {c}.", "a {c}.", "an image of a {c}.")
CONCLIP_TEMPLATES = {"standard": ("this is a photo of a {c}",), "negated": ("this is not a photo of a {c}",)}

_NAME_ORDER = ("size", "colour", "state", "material", "shape")
"""``shape`` comes last in a class name ("large red striped circle")."""

WEB_ONLY, COCO = "web_only", "coco"
"""The class groups: a class naming a concept only the web split shows, and the others."""


def concept_values(wcfg: WorldConfig) -> dict[str, tuple[str, ...]]:
    """Concept values per attribute over the web split's vocabulary (the COCO one plus the web-only concepts)."""
    shapes, colours = wcfg.vocabulary(web=True)
    return {"size": tuple(SIZES), "colour": colours, "state": STATES, "material": MATERIALS, "shape": shapes,
            "background": tuple(BACKGROUNDS)}


def class_group(values: dict[str, str]) -> str:
    return WEB_ONLY if values.get("shape") in WEB_ONLY_SHAPES or values.get("colour") in WEB_ONLY_COLOURS else COCO


@dataclass(frozen=True)
class ZeroShotTask:
    name: str
    stands_for: str
    label_attrs: tuple[str, ...]  # attributes that define the class

    def values(self, wcfg: WorldConfig) -> list[dict[str, str]]:
        """The classes, as concept values, in label order."""
        vocab = concept_values(wcfg)
        return [dict(zip(self.label_attrs, v, strict=True))
                for v in itertools.product(*(vocab[a] for a in self.label_attrs))]

    def classnames(self, wcfg: WorldConfig) -> list[str]:
        return [class_name(v) for v in self.values(wcfg)]

    def class_groups(self, wcfg: WorldConfig) -> dict[str, list[int]]:
        """``{group: [class index, ...]}`` (only the groups that have classes)."""
        out: dict[str, list[int]] = {}
        for i, v in enumerate(self.values(wcfg)):
            out.setdefault(class_group(v), []).append(i)
        return out


def class_name(values: dict[str, str]) -> str:
    """The class phrase: attributes in caption order, then the shape noun (``shape`` when the shape is not part
    of the label), then ``on a <colour> background`` when the background is."""
    words = [values[a] for a in _NAME_ORDER if a in values and a != "shape"]
    words.append(values.get("shape", "shape"))
    if "background" in values:
        words += ["on", "a", values["background"], "background"]
    return " ".join(words)


def _tasks(*rows: tuple[str, str, tuple[str, ...]]) -> dict[str, ZeroShotTask]:
    return {n: ZeroShotTask(n, s, a) for n, s, a in rows}


SUITES: dict[str, dict[str, ZeroShotTask]] = {
    "zeroshot_aro": _tasks(
        ("cifar10", "CIFAR10", ("shape",)),
        ("cifar100", "CIFAR100", ("colour", "shape")),
        ("imagenet", "ImageNet", ("colour", "material", "shape")),
    ),
    "zeroshot_conclip": _tasks(
        ("imagenet", "ImageNet-1k", ("colour", "material", "shape")),
        ("cifar10", "CIFAR-10", ("shape",)),
        ("cifar100", "CIFAR-100", ("colour", "shape")),
        ("caltech101", "Caltech-101", ("size", "shape")),
        ("food101", "Food-101", ("material", "shape")),
        ("flowers102", "Flowers-102", ("colour", "material")),
        ("pets", "Oxford Pets", ("state", "shape")),
        ("cars", "Stanford Cars", ("size", "colour", "shape")),
    ),
    "zeroshot_elevater": _tasks(*(
        (f"task{i:02d}", f"ELEVATER task {i} ({' + '.join(a)})", a) for i, a in enumerate((
            ("shape",), ("colour",), ("material",), ("size",), ("state",), ("background",),
            ("colour", "shape"), ("material", "shape"), ("size", "shape"), ("state", "shape"),
            ("background", "shape"), ("colour", "material"), ("size", "colour"), ("state", "colour"),
            ("background", "colour"), ("size", "material"), ("colour", "material", "shape"),
            ("size", "colour", "shape"), ("size", "material", "shape"), ("state", "colour", "shape"),
            ("background", "colour", "shape"),
        ), start=1))),
}
SUITE_TEMPLATES = {"zeroshot_aro": {"standard": TEMPLATES}, "zeroshot_conclip": CONCLIP_TEMPLATES,
                   "zeroshot_elevater": {"standard": TEMPLATES}}


def render_class_image(values: dict[str, str], wcfg: WorldConfig, rng: np.random.Generator, image_id: str) -> np.ndarray:
    """One object showing ``values``; every attribute not in the label is drawn at random (a hollow object has
    no texture, so a label with a material is solid and a hollow label is plain). The draws keep the order of
    the first toy pipeline's generator (size, colour and material are drawn even when the label fixes them), so
    the ARO suite's images are the same as before."""
    s = wcfg.image_size
    shapes, colours = wcfg.vocabulary(web=True)
    size = values.get("size", list(SIZES)[rng.integers(len(SIZES))])
    half = wcfg.half_extent(size)
    shape = values["shape"] if "shape" in values else shapes[rng.integers(len(shapes))]
    colour = values.get("colour", colours[rng.integers(len(colours))])
    state = values.get("state", "solid")
    material = values.get("material", MATERIALS[rng.integers(len(MATERIALS))] if state == "solid" else "plain")
    obj = Obj(0, shape=shape, colour=colour, size=size, material=material, state=state,
              x=float(rng.uniform(half + 1, s - half - 1)), y=float(rng.uniform(half + 1, s - half - 1)), half=half,
              heading=float(rng.uniform(0, 360)) if shape == "arrow" else 0.0)
    background = values.get("background", list(BACKGROUNDS)[rng.integers(len(BACKGROUNDS))])
    return render(Scene(image_id, background, [obj]), s)


def build_task(task: ZeroShotTask, per_class: int, wcfg: WorldConfig,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Images uint8 ``[C * per_class, H, W, 3]`` (class-major), labels ``[N]``, class names ``[C]``."""
    values = task.values(wcfg)
    labels = np.repeat(np.arange(len(values)), per_class)
    images = np.stack([render_class_image(values[y], wcfg, rng, f"{task.name}/{i}") for i, y in enumerate(labels)])
    return images, labels, task.classnames(wcfg)


def _build_suite(ctx: TwinContext, suite: str) -> TwinResult:
    per_class = option(ctx.options, "images_per_class", 20 if suite == "zeroshot_aro" else 4, suite, minimum=1)
    root = ctx.folder()
    counts = {}
    for name, task in SUITES[suite].items():
        rng = np_rng(ctx.seed, "benchmarks", "zeroshot", name) if suite == "zeroshot_aro" else ctx.rng(name)
        images, labels, _ = build_task(task, per_class, ctx.wcfg, rng)
        seen: dict[int, int] = {}
        for im, y in zip(images, labels, strict=True):
            k = seen[int(y)] = seen.get(int(y), -1) + 1
            write_png(root / name / label_folder(int(y)) / f"{k:04d}.png", im)
        counts[f"{name}/n_images"] = len(labels)
    groups = {n: t.class_groups(ctx.wcfg) for n, t in SUITES[suite].items()}
    write_suite(root, {n: t.classnames(ctx.wcfg) for n, t in SUITES[suite].items()}, SUITE_TEMPLATES[suite],
                # written only when some class is web-only (a world without web-only concepts: the files as before)
                groups if any(WEB_ONLY in g for g in groups.values()) else None)
    return TwinResult({f"{suite}_dir": ctx.rel(root)}, counts)


for _suite in SUITES:
    TWINS.add(_suite, lambda ctx, s=_suite: _build_suite(ctx, s))

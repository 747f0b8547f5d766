"""Caption styles of the toy world.

- ``web``: one alt-text-like caption per image, standing for web pretraining text. It names concepts and
  binds them to objects only with probability ``bind_prob``; it states a relation only with ``relation_prob``.
  These two knobs are the world's handle on the ARO hypothesis (pretraining text rarely needs binding/order).
- ``coco``: 5 detailed captions per image, each stating one relation fact with attribute-rich noun phrases, or
  (with probability ``and_prob``) naming two objects joined by "and", as real COCO captions often do. A relation
  caption of a scene with a third object names it too with probability ``extra_prob``: "... with a C", or
  (with probability ``extra_and_prob``) "... and a C", a caption that states a relation AND uses "and", as
  most real COCO captions with "and" do ("a man and a woman sitting on a bench"). ``detailed_colour_prob``,
  ``detailed_size_prob`` and ``detailed_material_prob`` set the attribute probabilities of these captions apart
  from the web split's (``scripts/caption_statistics.py`` calibrates all of these against real COCO captions).
- ``flickr``: 5 detailed captions in a second style (sentence case, verbs like "sits", final period).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .concepts import ALL_RELATIONS, COUNT_WORDS, EXTENDED_SYNONYMS, NEGATION_WORDS, SHAPES, SYNONYMS
from .scene import Obj, Scene

SYNONYM_SETS: dict[str, dict[str, tuple[str, ...]]] = {"base": SYNONYMS, "extended": EXTENDED_SYNONYMS}
"""``world.captions.synonyms`` -> the table captions draw synonyms from (base: the first world's two size pairs)."""

NEGATION_MIX: tuple[float, float, float] = (59 / 114, 37 / 114, 18 / 114)
"""Shares of "no", "not", "without" (:data:`concepts.NEGATION_WORDS` order) among negated captions: the counts of
captions with each word in the COCO Karpathy test captions (59, 37 and 18 of 25,010; ``../shared/real_samples``)."""


@dataclass(frozen=True)
class CaptionConfig:
    """Knobs of the world's caption writing (``world.captions.*`` in params.yaml)."""

    web_bind_prob: float = 0.1
    web_relation_prob: float = 0.02
    colour_prob: float = 0.9
    size_prob: float = 0.35
    material_prob: float = 0.3
    state_prob: float = 0.6
    synonym_prob: float = 0.2
    and_prob: float = 0.0
    extra_prob: float = 0.3
    """COCO/Flickr relation captions: probability of naming a third object of the scene after the relation."""
    extra_and_prob: float = 0.0
    """Probability that such a third object is joined by "and" instead of "with" (0: always "with", and the
    caption writing draws no extra random number, so the world is the one generated before this knob existed)."""
    detailed_colour_prob: float | None = None
    """COCO/Flickr captions only: ``colour_prob`` for them (None: the shared value). The attribute knobs above are
    shared with the web split, so these calibrate the fine-tuning twins without changing the pretraining text."""
    detailed_size_prob: float | None = None
    """COCO/Flickr captions only: ``size_prob`` for them (None: the shared value)."""
    detailed_material_prob: float | None = None
    """COCO/Flickr captions only: ``material_prob`` for them (None: the shared value)."""
    captions_per_image: int = 5
    synonyms: str = "base"
    """Which synonym table captions draw from (:data:`SYNONYM_SETS`): ``base`` (size words only, the first world) or
    ``extended`` (shapes, colours and relations too)."""
    negation_prob: float = 0.0
    """Probability that a caption (any style) ends in a true negated clause about a shape the scene does not show
    ("... and no star", "... but not a heart", "... without a cross"), the word drawn by :data:`NEGATION_MIX`. So
    the models meet no / not / without in training without any need to understand them (CoN-CLIP's premise). 0: no
    random number is drawn (the first world)."""
    count_prob: float = 0.0
    """Probability that a caption (any style) starts by counting the scene's objects ("two shapes: ..."), so the
    number words are trained. 0: no random number is drawn (the first world)."""

    def __post_init__(self) -> None:
        if self.synonyms not in SYNONYM_SETS:
            raise ValueError(f"world.captions.synonyms={self.synonyms!r}: expected one of {sorted(SYNONYM_SETS)}")
        for name in ("web_bind_prob", "web_relation_prob", "colour_prob", "size_prob", "material_prob",
                     "state_prob", "synonym_prob", "and_prob", "extra_prob", "extra_and_prob", "negation_prob",
                     "count_prob", *DETAILED_OVERRIDES):
            v = getattr(self, name)
            if v is None and name in DETAILED_OVERRIDES:
                continue
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1:
                raise ValueError(f"world.captions.{name}={v}: must be a probability in [0, 1]")
        if self.captions_per_image < 1:
            raise ValueError(f"world.captions.captions_per_image={self.captions_per_image}: must be >= 1")


DETAILED_OVERRIDES = ("detailed_colour_prob", "detailed_size_prob", "detailed_material_prob")
"""Knobs that override a shared attribute knob (the name without ``detailed_``) in COCO/Flickr captions."""


def detailed_config(cfg: CaptionConfig) -> CaptionConfig:
    """The knobs COCO/Flickr captions use: ``cfg`` with its ``detailed_*`` overrides applied (``cfg`` itself
    when none is set, so the world is the one generated before the overrides existed)."""
    over = {name.removeprefix("detailed_"): getattr(cfg, name) for name in DETAILED_OVERRIDES}
    over = {k: v for k, v in over.items() if v is not None}
    return replace(cfg, **over) if over else cfg


def _word(rng: np.random.Generator, w: str, cfg: CaptionConfig) -> str:
    """``w`` or, with ``synonym_prob``, one of its synonyms; draws a random number only when ``w`` has one."""
    syn = SYNONYM_SETS[cfg.synonyms].get(w)
    if syn and rng.random() < cfg.synonym_prob:
        return syn[rng.integers(len(syn))]
    return w


def noun_phrase(rng: np.random.Generator, o: Obj, cfg: CaptionConfig, *, colour: bool | None = None) -> str:
    """Attributes then the shape noun, e.g. "large red striped circle"."""
    words = []
    if rng.random() < cfg.size_prob:
        words.append(_word(rng, o.size, cfg))
    if colour if colour is not None else rng.random() < cfg.colour_prob:
        words.append(_word(rng, o.colour, cfg))
    if o.state == "hollow" and rng.random() < cfg.state_prob:
        words.append("hollow")
    elif o.material != "plain" and rng.random() < cfg.material_prob:
        words.append(o.material)
    words.append(_word(rng, o.shape, cfg))
    return " ".join(words)


def _article(np_: str) -> str:
    return "an" if np_[0] in "aeiou" else "a"


def _pick_fact(rng: np.random.Generator, scene: Scene) -> tuple[Obj, str, Obj] | None:
    facts = [r for r in scene.relations if not ALL_RELATIONS[r[1]].symmetric]
    if not facts:
        facts = list(scene.relations)
    if not facts:
        return None
    s, p, o = facts[rng.integers(len(facts))]
    return scene.obj(s), p, scene.obj(o)


def web_caption(rng: np.random.Generator, scene: Scene, cfg: CaptionConfig) -> str:
    objs = list(scene.objects)
    rng.shuffle(objs)
    if rng.random() < cfg.web_bind_prob:
        fact = _pick_fact(rng, scene) if rng.random() < cfg.web_relation_prob else None
        if fact is not None:
            a, rel, b = fact
            na, nb = noun_phrase(rng, a, cfg), noun_phrase(rng, b, cfg)
            return f"{_article(na)} {na} {_word(rng, rel, cfg)} {_article(nb)} {nb}"
        nps = [noun_phrase(rng, o, cfg) for o in objs]
        return " and ".join(f"{_article(n)} {n}" for n in nps)
    # Unbound alt-text: shapes and attributes named, but not which attribute goes with which shape.
    shapes = [o.shape for o in objs]
    attrs = []
    for o in objs:
        if rng.random() < cfg.colour_prob:
            attrs.append(o.colour)
        if o.state == "hollow" and rng.random() < cfg.state_prob:
            attrs.append("hollow")
        elif o.material != "plain" and rng.random() < cfg.material_prob:
            attrs.append(o.material)
    rng.shuffle(attrs)
    style = rng.integers(3)
    if style == 0 or not attrs:
        head = " and ".join(f"{_article(s)} {s}" for s in shapes)
        return f"{head}, {' '.join(attrs)}".strip(", ") if attrs else head
    if style == 1:
        return ", ".join(shapes + attrs)
    return f"clipart of {' and '.join(shapes)} in {' and '.join(attrs)}"



def pair_caption(rng: np.random.Generator, scene: Scene, i: int, j: int, cfg: CaptionConfig) -> str:
    """A bound web caption stating how objects ``i`` and ``j`` relate (one non-symmetric relation between them,
    in a random direction), e.g. "a red circle to the left of a blue square" (the captions of a layout twin pair,
    :func:`vlcomp.world.generate.layout_twin`)."""
    facts = [r for r in scene.relations if {r[0], r[2]} == {i, j} and not ALL_RELATIONS[r[1]].symmetric]
    if not facts:
        raise ValueError(f"{scene.image_id}: objects {i} and {j} have no non-symmetric relation")
    s, rel, o = facts[rng.integers(len(facts))]
    na, nb = noun_phrase(rng, scene.obj(s), cfg), noun_phrase(rng, scene.obj(o), cfg)
    return f"{_article(na)} {na} {_word(rng, rel, cfg)} {_article(nb)} {nb}"

COCO_TEMPLATES = (
    "{a} {A} {rel} {b} {B}",
    "there is {a} {A} {rel} {b} {B}",
    "the {A} is {rel} the {B}",
    "{a} {A} {rel} {b} {B} on {bg} background",
    "{A} {rel} {B}",
)
FLICKR_TEMPLATES = (
    "{Cap_a} {A} is {rel} {b} {B} .",
    "{Cap_a} {A} sits {rel} {b} {B}.",
    "{Cap_a} {A} placed {rel} {b} {B} on {bg} background.",
    "We see {a} {A} {rel} {b} {B}.",
)


COCO_AND_TEMPLATES = ("{a} {A} and {b} {B}", "the {A} and the {B}")
FLICKR_AND_TEMPLATES = ("{Cap_a} {A} and {b} {B}.",)


def conjunction_caption(rng: np.random.Generator, scene: Scene, cfg: CaptionConfig, style: str) -> str:
    """Two distinct objects of the scene, each with its own attributes, joined by "and" (no relation stated)."""
    i, j = rng.choice(len(scene.objects), size=2, replace=False)
    na, nb = noun_phrase(rng, scene.objects[i], cfg), noun_phrase(rng, scene.objects[j], cfg)
    templates = COCO_AND_TEMPLATES if style == "coco" else FLICKR_AND_TEMPLATES
    return templates[rng.integers(len(templates))].format(
        a=_article(na), Cap_a=_article(na).capitalize(), A=na, b=_article(nb), B=nb)


def detailed_caption(rng: np.random.Generator, scene: Scene, cfg: CaptionConfig, style: str) -> str:
    templates = COCO_TEMPLATES if style == "coco" else FLICKR_TEMPLATES
    # drawn only when the knob is on, so and_prob = 0 leaves every other caption (and the world) unchanged
    if cfg.and_prob > 0 and len(scene.objects) >= 2 and rng.random() < cfg.and_prob:
        return conjunction_caption(rng, scene, cfg, style)
    fact = _pick_fact(rng, scene)
    if fact is None:  # a single object
        o = scene.objects[0]
        n = noun_phrase(rng, o, cfg)
        return f"{_article(n)} {n}" if style == "coco" else f"{_article(n).capitalize()} {n}."
    a, rel, b = fact
    na, nb = noun_phrase(rng, a, cfg), noun_phrase(rng, b, cfg)
    text = templates[rng.integers(len(templates))].format(
        a=_article(na), Cap_a=_article(na).capitalize(), A=na, rel=_word(rng, rel, cfg), b=_article(nb), B=nb,
        bg=_article(scene.background) + " " + scene.background,
    )
    extra = [o for o in scene.objects if o.id not in (a.id, b.id)]
    if extra and rng.random() < cfg.extra_prob:
        nc = noun_phrase(rng, extra[0], cfg)
        # drawn only when the knob is on, so extra_and_prob = 0 leaves the world unchanged
        joiner = "and" if cfg.extra_and_prob > 0 and rng.random() < cfg.extra_and_prob else "with"
        text = text.rstrip(" .") + f" {joiner} {_article(nc)} {nc}" + ("." if style == "flickr" else "")
    return text


def count_and_negate(rng: np.random.Generator, text: str, scene: Scene, cfg: CaptionConfig, style: str) -> str:
    """``text`` with, at ``count_prob``, the scene's object count in front ("two shapes: ...") and, at
    ``negation_prob``, a negated clause about a shape it does not show at the end. Both are true of the scene.
    Draws random numbers only for the knobs that are on."""
    end = "." if style == "flickr" else ""
    if cfg.count_prob > 0 and rng.random() < cfg.count_prob:
        n = len(scene.objects)
        head = f"{COUNT_WORDS[n - 1]} {'shape' if n == 1 else 'shapes'}:"
        text = f"{head.capitalize() if style == 'flickr' else head} {text}"
    if cfg.negation_prob > 0 and rng.random() < cfg.negation_prob:
        present = {o.shape for o in scene.objects}
        absent = [s for s in SHAPES if s not in present]
        shape = absent[rng.integers(len(absent))]
        word = NEGATION_WORDS[rng.choice(len(NEGATION_WORDS), p=NEGATION_MIX)]
        clause = {"no": f"and no {shape}", "not": f"but not {_article(shape)} {shape}",
                  "without": f"without {_article(shape)} {shape}"}[word]
        text = f"{text.rstrip(' .')} {clause}{end}"
    return text


def captions_for(rng: np.random.Generator, scene: Scene, cfg: CaptionConfig, style: str) -> list[str]:
    """The captions of one image in one style (1 for ``web``, ``captions_per_image`` otherwise)."""
    if style == "web":
        return [count_and_negate(rng, web_caption(rng, scene, cfg), scene, cfg, style)]
    if style not in ("coco", "flickr"):
        raise ValueError(f"unknown caption style {style!r}; known: web, coco, flickr")
    cfg = detailed_config(cfg)
    return [count_and_negate(rng, detailed_caption(rng, scene, cfg, style), scene, cfg, style)
            for _ in range(cfg.captions_per_image)]

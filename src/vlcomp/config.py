"""params.yaml: loading and validation.

Each stage declares in dvc.yaml exactly the keys it reads; it loads them here into frozen dataclasses and
passes explicit values down. A wrong value raises ``ValueError`` naming the parameter.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

PROFILES = ("toy", "paper")


def load_params(path: str | Path = "params.yaml") -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: params file not found")
    try:
        with open(path) as f:
            params = yaml.safe_load(f)
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not valid YAML ({e})") from None
    if not isinstance(params, dict):
        raise ValueError(f"{path}: expected a mapping at the top level")
    profile = params.get("profile", "toy")
    if profile not in PROFILES:
        raise ValueError(f"profile={profile!r}: must be one of {', '.join(PROFILES)}")
    return params


def section(params: dict[str, Any], dotted: str) -> Any:
    """``section(p, "world.captions")`` -> p["world"]["captions"], naming the missing key on error."""
    node: Any = params
    walked = []
    for key in dotted.split("."):
        walked.append(key)
        if not isinstance(node, dict) or key not in node:
            raise ValueError(f"params: missing key {'.'.join(walked)!r}")
        node = node[key]
    return node


def build(cls: type, values: dict[str, Any] | None, prefix: str):
    """Instantiate a frozen dataclass from a params mapping, rejecting unknown keys by their full name."""
    values = dict(values or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ValueError(f"params: unknown key(s) {', '.join(f'{prefix}.{k}' for k in unknown)}; known: {', '.join(fields)}")
    for name, f in fields.items():
        if name in values and isinstance(values[name], list):
            values[name] = tuple(values[name])
        if name not in values and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ValueError(f"params: missing key {prefix}.{name}")
    try:
        return cls(**values)
    except TypeError as e:
        raise ValueError(f"params: bad value under {prefix}: {e}") from None
    except ValueError as e:
        msg = str(e)
        raise ValueError(msg if msg.startswith(("params:", prefix)) else f"params: {prefix}.{msg}") from None


def positive(value: Any, name: str, *, integer: bool = False) -> Any:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    if integer:
        ok = ok and float(value).is_integer()
    if not ok:
        kind = "a positive integer" if integer else "a positive number"
        raise ValueError(f"params: {name}={value!r} must be {kind}")
    return int(value) if integer else value


#: Where the profile layers live: ``common.yaml`` (every section both profiles share) and one overlay per
#: profile (``toy.yaml``, ``paper.yaml``) holding only what differs.
PROFILE_DIR = "profiles"
COMMON_LAYER = "common"


def read_layer(path: str | Path) -> dict[str, Any]:
    """One YAML layer (a profile file or an overlay): a mapping, errors naming the file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: params layer not found")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not valid YAML ({e})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top level")
    return data


BASE_METHOD = "clip"
"""The method name of a base model (``clip-b<k>``: the pretrained base every method of chain ``b<k>`` starts from)."""


LR_SELECTION_RULES = ("first_chain", "per_chain")
"""Values of params ``lr_selection`` (:func:`derive_variants`)."""


def _seed_list(values: Any, what: str) -> list[int]:
    if not isinstance(values, list) or not values or len(set(map(repr, values))) != len(values) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise ValueError(f"params: {what}={values!r} must be a non-empty list of distinct integers >= 0")
    return values


def base_name(seed: int) -> str:
    """The chain name of a base seed (``b0``)."""
    return f"b{seed}"


def base_model_name(base: str) -> str:
    """The evaluated base model of chain ``base`` (``clip-b0``)."""
    return f"{BASE_METHOD}-{base}"


def derive_variants(params: dict[str, Any]) -> dict[str, Any]:
    """The pipeline's runs, derived from ``base_seeds`` (whole chains) and ``seeds`` (fine-tuning seeds per chain);
    dvc.yaml's ``foreach`` stages iterate over them (DVC cannot compute a product itself):

    - ``bases``: one chain per base seed, ``b<k>: {seed: k}``: ``pretrain@b<k>`` (the base model),
      ``evaluate_base@b<k>`` (model ``clip-b<k>``);
    - ``parsing``: ``<split>: {mined_by: [generator, ...]}`` per split a generator of ``mine`` mines (``parse@<split>``:
      its captions parsed with spaCy once, for every chain);
    - ``mining``: ``<generator>-b<k>: {generator, base, split}`` per generator of ``mine`` and chain (``mine@...``);
    - ``selections``: ``<method>-b<k>: {method, base, generator}`` (``select_lr@...``: a learning-rate sweep on
      chain ``b<k>``'s base and mined data). ``lr_selection`` says on which chains: ``first_chain`` (the
      default) sweeps once per method, on the chain of the first base seed, and every chain fine-tunes at that
      rate, as a paper picks one rate per method; ``per_chain`` sweeps on every chain (the selection is then
      part of each chain's variance, at one sweep per method and chain);
    - ``variants``: ``<method>-b<k>s<s>: {method, base, seed, generator, selection}`` per trained method, chain
      and fine-tuning seed, in the order of ``seeds`` then ``base_seeds`` (``finetune@...``, ``evaluate@...``);
      ``selection`` names the sweep whose rate it trains at.

    A method with no ``seeds`` entry is not trained. Returns a new mapping; errors name the params key."""
    seeds = params.get("seeds")
    if seeds is None:
        return dict(params)
    if not isinstance(seeds, dict):
        raise ValueError(f"params: seeds={seeds!r} must map each method to its list of fine-tuning seeds")
    base_seeds = _seed_list(params.get("base_seeds", [0]), "base_seeds")
    bases = {base_name(k): {"seed": k} for k in base_seeds}
    methods = params.get("methods") or {}
    mine = params.get("mine") or {}
    mining = {f"{g}-{b}": {"generator": g, "base": b, "split": (mine[g] or {}).get("split")} for g in mine for b in bases}
    parsing: dict[str, Any] = {}
    for g in mine:
        split = (mine[g] or {}).get("split")
        if not isinstance(split, str) or not split:
            raise ValueError(f"params: mine.{g}.split={split!r} must name the world split it mines")
        parsing.setdefault(split, {"mined_by": []})["mined_by"].append(g)
    rule = params.get("lr_selection", "first_chain")
    if rule not in LR_SELECTION_RULES:
        raise ValueError(f"params: lr_selection={rule!r} must be one of {', '.join(LR_SELECTION_RULES)}")
    first = base_name(base_seeds[0])
    selections: dict[str, Any] = {}
    variants: dict[str, Any] = {}
    for method, values in seeds.items():
        if method not in methods:
            raise ValueError(f"params: seeds.{method}: no such method (methods: {', '.join(methods) or 'none'})")
        generator = (methods[method] or {}).get("generator")
        if not isinstance(generator, str):
            raise ValueError(f"params: methods.{method}.generator must name a generator (seeds.{method} needs it)")
        values = _seed_list(values, f"seeds.{method}")
        if generator not in (params.get("mine") or {}):
            raise ValueError(f"params: methods.{method}.generator={generator!r} has no mine.{generator} section")
        for seed in values:
            for b in bases:
                swept = b if rule == "per_chain" else first
                selections[f"{method}-{swept}"] = {"method": method, "base": swept, "generator": generator}
                variants[f"{method}-{b}s{seed}"] = {"method": method, "base": b, "seed": seed, "generator": generator,
                                                    "selection": f"{method}-{swept}"}
    return {**params, "bases": bases, "parsing": parsing, "mining": mining, "selections": selections,
            "variants": variants}


def chain_seed(params: dict[str, Any], base: str) -> int:
    """The root seed of chain ``base`` (``b<k>``): derived from ``base.seed`` and the chain's base seed, so every
    stage of the chain (pretraining, mining, LR selection, fine-tuning) draws its own stream from it."""
    from .seeding import derive_seed

    bases = section(params, "bases")
    if base not in bases:
        raise ValueError(f"params: unknown base {base!r}; bases: {', '.join(bases) or 'none'}")
    return derive_seed(section(params, "base.seed"), "base", section(params, f"bases.{base}.seed"))


def resolve_layers(*layers: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge params layers in order (:func:`merge_overlay`), then derive the runs (``bases``, ``mining``,
    ``selections``, ``variants``: :func:`derive_variants`). Idempotent on a resolved params file."""
    params: dict[str, Any] = {}
    for layer in layers:
        params = merge_overlay(params, layer)
    return derive_variants(params)


def profile_params(name: str, root: str | Path = ".", *overlays: dict[str, Any]) -> dict[str, Any]:
    """The resolved params of profile ``name``: ``profiles/common.yaml`` + ``profiles/<name>.yaml`` (+ overlays,
    e.g. the smoke sizes). This is what ``python -m vlcomp.profiles <name>`` writes to ``params.yaml``."""
    if name not in PROFILES:
        raise ValueError(f"profile {name!r}: must be one of {', '.join(PROFILES)}")
    folder = Path(root) / PROFILE_DIR
    common, own = read_layer(folder / f"{COMMON_LAYER}.yaml"), read_layer(folder / f"{name}.yaml")
    if "profile" in common:
        raise ValueError(f"{folder / COMMON_LAYER}.yaml: must not set `profile` (each profile file sets its own)")
    if own.get("profile") != name:
        raise ValueError(f"{folder / name}.yaml: says profile: {own.get('profile')!r}, expected {name!r}")
    return resolve_layers(common, own, *overlays)


def merge_overlay(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``overlay`` onto ``base``; mappings named in the overlay's ``_replace`` list are replaced
    whole instead of merged (e.g. a smaller ``variants`` set)."""
    replace = set(overlay.get("_replace", []))

    def merge(a: Any, b: Any, path: str) -> Any:
        if isinstance(a, dict) and isinstance(b, dict) and path not in replace:
            out = dict(a)
            for k, v in b.items():
                if k == "_replace":
                    continue
                key = f"{path}.{k}" if path else k
                out[k] = merge(a.get(k), v, key) if k in a else v
            return out
        return b

    return merge(base, overlay, "")


def expand_path(value: str, what: str = "", *, strict: bool = True) -> str:
    """``$VAR`` / ``${VAR}`` and ``~`` expanded: the one expander of every path in params (``paper_inputs``,
    ``model.weights``, ``paper_models``, ``$VLCOMP_DATA`` ...). With ``strict`` a variable left unset is an error
    naming ``what`` (the parameter); without it the unexpanded text stays, so the loader's "not found" names it."""
    import os

    expanded = os.path.expanduser(os.path.expandvars(str(value)))
    if strict and "$" in expanded:
        raise ValueError(f"{what or 'path'}={value!r}: environment variable not set ({expanded!r})")
    return expanded


def expand_inputs(value: Any) -> Any:
    """Every string of a (nested) inputs mapping through :func:`expand_path`, leniently."""
    if isinstance(value, str):
        return expand_path(value, strict=False)
    if isinstance(value, dict):
        return {k: expand_inputs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_inputs(v) for v in value]
    return value

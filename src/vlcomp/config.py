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


SEED_CHAINS = ("all", "first")
"""``seeds.<method>.chains``: run the method on every chain, or on the first base seed's chain only (an ablation
row of one whole chain, marked as such in the reports)."""


def _method_seeds(values: Any, what: str) -> tuple[list[int], str]:
    """``seeds.<method>``: a list of fine-tuning seeds (run on every chain), or ``{seeds: [...], chains: all|first}``."""
    if isinstance(values, dict):
        unknown = sorted(set(values) - {"seeds", "chains"})
        if unknown:
            raise ValueError(f"params: {what}: unknown key(s) {unknown}; known: seeds, chains")
        chains = values.get("chains", "all")
        if chains not in SEED_CHAINS:
            raise ValueError(f"params: {what}.chains={chains!r} must be one of {', '.join(SEED_CHAINS)}")
        return _seed_list(values.get("seeds"), f"{what}.seeds"), chains
    return _seed_list(values, what), "all"


def base_name(seed: int) -> str:
    """The chain name of a base seed (``b0``)."""
    return f"b{seed}"


BASE_MODEL_KEYS = ("arch", "weights", "loss", "benchmarks", "stands_for")
"""Keys of ``base_models.<kind>``: the architecture (a registered toy config or an open_clip name; default
``model.arch``), its released weights (the paper profile: an open_clip tag or a state-dict file, resolved by
``pretrain@<kind>-b<k>``; never ``model.weights``, which belong to another model; the toy profile pretrains it and
gives none), the pretraining loss (a name of ``vlcomp.losses.LOSSES``; default ``clip``), the benchmarks its
evaluation scores (default ``evaluate.benchmarks``) and what it stands for."""


def base_key(kind: str | None, chain: str) -> str:
    """The base of chain ``chain`` (``b0``) for base model ``kind``: the chain itself for the default base (``model``
    pretrained with the CLIP loss), ``<kind>-<chain>`` for another (``vit-b0``)."""
    return chain if kind is None else f"{kind}-{chain}"


def _base_models(params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    kinds = params.get("base_models") or {}
    if not isinstance(kinds, dict):
        raise ValueError(f"params: base_models={kinds!r} must map a name to {{{', '.join(BASE_MODEL_KEYS)}}}")
    for kind, values in kinds.items():
        if not isinstance(values, dict):
            raise ValueError(f"params: base_models.{kind}={values!r} must be a mapping ({', '.join(BASE_MODEL_KEYS)})")
        unknown = sorted(set(values) - set(BASE_MODEL_KEYS))
        if unknown:
            raise ValueError(f"params: base_models.{kind}: unknown key(s) {unknown}; known: {', '.join(BASE_MODEL_KEYS)}")
        if not str(kind).replace("_", "").isalnum() or str(kind)[:1] == "b" and str(kind)[1:].isdigit():
            raise ValueError(f"params: base_models.{kind}: a name must be alphanumeric and not look like a chain (b<k>)")
    return kinds


def base_method(params: dict[str, Any], base: str) -> str:
    """The method name of base ``base``'s evaluated model: :data:`BASE_METHOD` for a chain's default base, ``clip_<kind>``
    for another base model (``clip_vit``, ``clip_cyclip``), so a report's CLIP rows aggregate the default bases only."""
    return base_model_method(((params.get("bases") or {}).get(base) or {}).get("model"))


def base_model_method(kind: str | None) -> str:
    """The method of base model ``kind``'s un-fine-tuned evaluations (:func:`base_method`'s naming, by kind):
    :data:`BASE_METHOD` for the default base (``kind`` None), ``clip_<kind>`` for another."""
    return f"{BASE_METHOD}_{kind}" if kind else BASE_METHOD


def base_model_name(base: str) -> str:
    """The evaluated base model of chain ``base`` (``clip-b0``)."""
    return f"{BASE_METHOD}-{base}"


MLM_DIR = "models/mlm"
"""The ``train_mlm`` stage's output: the small masked LM the unmasking generators fill with."""
NO_MODEL_DIR = "data/world"
"""What a ``generate@`` run that reads no model names as its model dependency (a stage's dependency list has a
fixed shape under DVC's ``foreach``; ``data/world`` is a dependency of every such run anyway)."""


def registered_generator(mine: dict[str, Any], name: str) -> str:
    """The registered generator (a name of :data:`vlcomp.generators.GENERATORS`) of the mined dataset ``mine.<name>``:
    its ``generator`` key, else its own name. One generator can so mine two corpora (TSVLC's RB+LLM negatives of the
    CC3M twin, ``tsvlc_mix``, and of the LAION twin, ``tsvlc_mix_laion: {generator: tsvlc_mix, split: laion}``)."""
    value = (mine.get(name) or {}).get("generator", name)
    if not isinstance(value, str) or not value:
        raise ValueError(f"params: mine.{name}.generator={value!r} must name a registered generator")
    return value


def generator_config(mine: dict[str, Any], name: str) -> dict[str, Any]:
    """``mine.<name>`` without its ``generator`` key: the keywords of the generator's config class."""
    return {k: v for k, v in (mine.get(name) or {}).items() if k != "generator"}


def generator_reads(name: str) -> str:
    """What generator ``name`` (registered) reads besides the world: ``base`` (a chain's base model: mined per chain),
    ``mlm`` (the small masked LM) or ``none`` (:attr:`vlcomp.generators.Generator.reads`). A name the registry does
    not know counts as ``base``; its ``mine@`` stage then fails naming it and the known generators."""
    from .generators import GENERATORS

    return GENERATORS.get(name).reads if name in GENERATORS else "base"


def mined_dir(mine: dict[str, Any], name: str, base: str) -> str:
    """The folder under ``data/mined`` a run of chain ``base`` reads the mined dataset ``mine.<name>`` from:
    ``<name>-<base>`` for a generator mined per chain (it reads the base model), ``<name>`` for one generated once
    for every chain."""
    return f"{name}-{base}" if generator_reads(registered_generator(mine, name)) == "base" else name


CHAIN_ROLES = ("first_chain", "other_chains")


def chain_benchmarks(spec: Any, first: bool, where: str) -> list[str] | None:
    """The benchmarks ``methods.<m>.benchmarks`` (``spec``) names for a run on the first chain (``first``) or another:
    ``null`` / ``all`` = every benchmark of ``evaluate.benchmarks`` (returned as ``None``), a list = that subset on
    every chain, ``{first_chain: ..., other_chains: ...}`` = each of those per chain role (TSVLC's headline rows: every
    benchmark on the first chain, for the cross-paper matrix, and the paper's own benchmarks on the others, whose
    runs only the paper's spreads read). Checked against ``evaluate.benchmarks`` by
    :func:`vlcomp.eval.run.evaluation_benchmarks`."""
    if isinstance(spec, dict):
        if set(spec) != set(CHAIN_ROLES):
            raise ValueError(f"params: {where}={spec!r}: a mapping needs exactly the keys {', '.join(CHAIN_ROLES)}")
        return chain_benchmarks(spec[CHAIN_ROLES[0] if first else CHAIN_ROLES[1]], first,
                                f"{where}.{CHAIN_ROLES[0] if first else CHAIN_ROLES[1]}")
    if spec is None or spec == "all":
        return None
    if not isinstance(spec, list | tuple) or not spec or not all(isinstance(n, str) for n in spec):
        raise ValueError(f"params: {where}={spec!r} must be null, 'all', a non-empty list of benchmark names or "
                         f"{{{': ..., '.join(CHAIN_ROLES)}: ...}}")
    return list(spec)


def derive_variants(params: dict[str, Any]) -> dict[str, Any]:
    """The pipeline's runs, derived from ``base_seeds`` (whole chains) and ``seeds`` (fine-tuning seeds per chain);
    dvc.yaml's ``foreach`` stages iterate over them (DVC cannot compute a product itself):

    - ``bases``: one chain per base seed, ``b<k>: {seed: k}``: ``pretrain@b<k>`` (the base model),
      ``evaluate_base@b<k>`` (model ``clip-b<k>``); and, on the chains where a method with ``base_model: <kind>``
      runs, that other base model, ``<kind>-b<k>: {seed: k, model: <kind>, arch?, loss?}`` (``base_models.<kind>``:
      TSVLC's ViT-B/16 and CyCLIP rows);
    - ``parsing``: ``<split>: {mined_by: [generator, ...]}`` per split a generator of ``mine`` reads (``parse@<split>``:
      its captions parsed with spaCy once, for every chain);
    - ``mining``: ``<generator>-b<k>: {generator, base, split}`` per generator of ``mine`` that reads the base model
      (NegCLIP's hard images) and chain (``mine@...``);
    - ``generating``: ``<generator>: {generator, split, model}`` per generator that reads no base model (TSVLC's text
      generators: ``generate@<generator>``, once for every chain; ``model``: the folder it reads, :data:`MLM_DIR` or
      :data:`NO_MODEL_DIR`);
    - ``selections``: ``<method>-b<k>: {method, base, generator, mined, mined_positives}`` (``select_lr@...``: a learning-rate sweep
      on chain ``b<k>``'s base and mined data). ``lr_selection`` says on which chains: ``first_chain`` (the
      default) sweeps once per method, on the chain of the first base seed, and every chain fine-tunes at that
      rate, as a paper picks one rate per method; ``per_chain`` sweeps on every chain (the selection is then
      part of each chain's variance, at one sweep per method and chain). A method with ``lr_from: <other>``
      trains at the rate swept for that other method (TSVLC trains every variant at one rate);
    - ``variants``: ``<method>-b<k>s<s>: {method, base, seed, generator, mined, mined_positives, selection}`` per
      trained method, chain and fine-tuning seed, in the order of ``seeds`` then ``base_seeds`` (``finetune@...``,
      ``evaluate@...``); ``mined`` is its generator's folder under ``data/mined`` (:func:`mined_dir`),
      ``mined_positives`` the folder its positives come from (``methods.<m>.positives_from``'s, else ``mined``
      again: dvc.yaml's dependency list has a fixed shape), ``selection`` names the sweep whose rate it trains at,
      ``benchmarks`` what its evaluation scores (:func:`chain_benchmarks` of ``methods.<m>.benchmarks`` for its
      chain; null = every benchmark).

    ``seeds.<method>`` is a list of fine-tuning seeds run on every chain, or ``{seeds: [...], chains: first}`` for a
    row run on the first chain only. A method with no ``seeds`` entry is not trained. Returns a new mapping; errors
    name the params key."""
    seeds = params.get("seeds")
    if seeds is None:
        return dict(params)
    if not isinstance(seeds, dict):
        raise ValueError(f"params: seeds={seeds!r} must map each method to its list of fine-tuning seeds")
    base_seeds = _seed_list(params.get("base_seeds", [0]), "base_seeds")
    bases = {base_name(k): {"seed": k} for k in base_seeds}
    kinds = _base_models(params)
    methods = params.get("methods") or {}
    mine = params.get("mine") or {}
    mining: dict[str, Any] = {}
    generating: dict[str, Any] = {}
    parsing: dict[str, Any] = {}
    for g in mine:
        split = (mine[g] or {}).get("split")
        if not isinstance(split, str) or not split:
            raise ValueError(f"params: mine.{g}.split={split!r} must name the world split it mines")
        parsing.setdefault(split, {"mined_by": []})["mined_by"].append(g)
        reads = generator_reads(registered_generator(mine, g))
        if reads == "base":
            mining.update({f"{g}-{b}": {"generator": g, "base": b, "split": split} for b in bases})
        else:
            generating[g] = {"generator": g, "split": split, "model": MLM_DIR if reads == "mlm" else NO_MODEL_DIR}
    rule = params.get("lr_selection", "first_chain")
    if rule not in LR_SELECTION_RULES:
        raise ValueError(f"params: lr_selection={rule!r} must be one of {', '.join(LR_SELECTION_RULES)}")
    first = base_name(base_seeds[0])

    def generator_of(method: str, where: str) -> str:
        generator = (methods[method] or {}).get("generator")
        if not isinstance(generator, str):
            raise ValueError(f"params: methods.{method}.generator must name a generator ({where} needs it)")
        if generator not in mine:
            raise ValueError(f"params: methods.{method}.generator={generator!r} has no mine.{generator} section")
        return generator

    def positives_of(method: str) -> str | None:
        other = (methods[method] or {}).get("positives_from")
        if other is not None and other not in mine:
            raise ValueError(f"params: methods.{method}.positives_from={other!r} has no mine.{other} section")
        return other

    def kind_of(method: str) -> str | None:
        kind = (methods[method] or {}).get("base_model")
        if kind is not None and kind not in kinds:
            raise ValueError(f"params: methods.{method}.base_model={kind!r} is not a key of base_models "
                             f"({', '.join(kinds) or 'none'})")
        return kind

    def base_of(method: str, chain: str) -> str:
        """The base ``method`` starts from on ``chain``, added to ``bases`` (and its per-chain mined data to
        ``mining``) when it is another base model's."""
        kind = kind_of(method)
        key = base_key(kind, chain)
        if key not in bases:
            bases[key] = {"seed": bases[chain]["seed"], "model": kind,
                          **{k: v for k, v in kinds[kind].items() if k != "stands_for"}}
        for g in filter(None, ((methods[method] or {}).get("generator"), (methods[method] or {}).get("positives_from"))):
            if g in mine and generator_reads(registered_generator(mine, g)) == "base":
                mining.setdefault(f"{g}-{key}", {"generator": g, "base": key, "split": mine[g]["split"]})
        return key

    selections: dict[str, Any] = {}
    variants: dict[str, Any] = {}
    for method, values in seeds.items():
        if method not in methods:
            raise ValueError(f"params: seeds.{method}: no such method (methods: {', '.join(methods) or 'none'})")
        values, chains = _method_seeds(values, f"seeds.{method}")
        generator = generator_of(method, f"seeds.{method}")
        swept_method = (methods[method] or {}).get("lr_from") or method
        if swept_method not in methods:
            raise ValueError(f"params: methods.{method}.lr_from={swept_method!r}: no such method")
        if swept_method != method and (methods[swept_method] or {}).get("lr_from"):
            raise ValueError(f"params: methods.{method}.lr_from={swept_method!r} itself has lr_from; name the "
                             "method whose rate is swept")
        swept_generator = generator_of(swept_method, f"methods.{method}.lr_from")
        chain_list = [base_name(k) for k in base_seeds] if chains == "all" else [first]
        for seed in values:
            for chain in chain_list:
                swept = base_of(swept_method, chain if rule == "per_chain" else first)
                b = base_of(method, chain)
                selections[f"{swept_method}-{swept}"] = {
                    "method": swept_method, "base": swept, "generator": swept_generator,
                    "mined": mined_dir(mine, swept_generator, swept),
                    "mined_positives": mined_dir(mine, positives_of(swept_method) or swept_generator, swept)}
                variants[f"{method}-{b}s{seed}"] = {
                    "method": method, "base": b, "seed": seed, "generator": generator,
                    "mined": mined_dir(mine, generator, b),
                    "mined_positives": mined_dir(mine, positives_of(method) or generator, b),
                    "selection": f"{swept_method}-{swept}",
                    "benchmarks": chain_benchmarks((methods[method] or {}).get("benchmarks"), chain == first,
                                                   f"methods.{method}.benchmarks")}
    return {**params, "bases": bases, "parsing": parsing, "mining": mining, "generating": generating,
            "selections": selections, "variants": variants}


def chain_seed(params: dict[str, Any], base: str) -> int:
    """The root seed of chain ``base`` (``b<k>``): derived from ``base.seed`` and the chain's base seed, so every
    stage of the chain (pretraining, mining, LR selection, fine-tuning) draws its own stream from it."""
    from .seeding import derive_seed

    bases = section(params, "bases")
    if base not in bases:
        raise ValueError(f"params: unknown base {base!r}; bases: {', '.join(bases) or 'none'}")
    kind = bases[base].get("model")
    return derive_seed(section(params, "base.seed"), "base", section(params, f"bases.{base}.seed"),
                       *([kind] if kind else []))


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

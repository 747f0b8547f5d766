"""params.yaml: loading and validation.

Each stage declares in dvc.yaml exactly the keys it reads; it loads them here into frozen dataclasses and
passes explicit values down. A wrong value raises ``ValueError`` naming the parameter.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

PROFILES = ("toy", "real")


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
    if profile in RENAMED_PROFILES:
        raise ValueError(f"{path}: profile {profile!r} was renamed {RENAMED_PROFILES[profile]!r}; rename it "
                         "(docs/pipeline.md, Names)")
    if profile not in PROFILES:
        raise ValueError(f"profile={profile!r}: must be one of {', '.join(PROFILES)}")
    check_renamed(params, str(path))
    return params


#: Params keys that were renamed so that each name has one meaning (docs/pipeline.md "Names"): ``(old, new)``
#: dotted paths, ``*`` matching any one key. A params file or layer that still names an old key is an error naming
#: its new name, never silently ignored.
RENAMED_KEYS: tuple[tuple[str, str], ...] = (
    ("base.seed", "root_seed"),          # "base" is a base model everywhere else
    ("generating", "mining"),            # one stage name: every mined dataset is a mine@ run
    ("model", "clip"),                   # "model" is an evaluated or trained model; this is the CLIP spec
    ("methods.*.model", "methods.*.tuning"),  # the frozen parts and LoRA adapters of a method's fine-tuning
    ("bases.*.model", "bases.*.family"),  # which base_models family a base is
    ("paper_inputs", "real_inputs"),     # "paper" is a publication; the profile of real data is `real`
    ("paper_models", "released_models"),
    ("paper_evaluate", "real_evaluate"),
)
#: Profiles that were renamed: ``{old: new}``.
RENAMED_PROFILES = {"paper": "real"}


def check_renamed(params: Any, where: str = "params") -> None:
    """Raise ``ValueError`` naming the new key when ``params`` (a params file or layer) uses a renamed one
    (:data:`RENAMED_KEYS`)."""
    def found(node: Any, parts: list[str], walked: list[str]) -> list[str]:
        if not parts:
            return [".".join(walked)]
        if not isinstance(node, dict):
            return []
        keys = list(node) if parts[0] == "*" else [parts[0]] if parts[0] in node else []
        return [hit for k in keys for hit in found(node[k], parts[1:], [*walked, str(k)])]

    for old, new in RENAMED_KEYS:
        for hit in found(params, old.split("."), []):
            renamed = ".".join(hit.split(".")[i] if p == "*" else p for i, p in enumerate(new.split(".")))
            raise ValueError(f"{where}: key {hit!r} was renamed {renamed!r}; rename it (docs/pipeline.md, Names)")


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
#: profile (``toy.yaml``, ``real.yaml``) holding only what differs.
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
    check_renamed(data, str(path))
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


def method_paper(params: dict[str, Any], method: str) -> str:
    """The paper a method belongs to: ``methods.<m>.paper``, required (its stages live under ``pipelines/<paper>/``,
    its rows in that paper's report); a method without one is an error naming it."""
    spec = (params.get("methods") or {}).get(method)
    if spec is None:
        raise ValueError(f"params: unknown method {method!r}")
    paper = (spec or {}).get("paper")
    if not paper:
        raise ValueError(f"params: methods.{method}.paper is not set: every method names the paper it belongs to "
                         "(its pipeline file, its report)")
    return str(paper)


def base_name(seed: int) -> str:
    """The chain name of a base seed (``b0``)."""
    return f"b{seed}"


BASE_MODEL_KEYS = ("arch", "weights", "loss", "benchmarks", "stands_for")
BASE_EVALUATION_KEYS = ("benchmarks", "stands_for")
"""Keys of ``base_models.<family>`` that the base's pretraining never reads: they stay out of the derived
``bases.<family>-b<k>`` (the params section ``pretrain@<b>`` and the fine-tunes of that base depend on)."""
"""Keys of ``base_models.<family>`` (a family of base model: a base other than the chain's default CLIP, e.g. ``vit``,
``cyclip``): the architecture (a registered toy config or an open_clip name; default ``clip.arch``), its released
weights (the real profile: an open_clip tag or a state-dict file, resolved by ``pretrain@<family>-b<k>``; never
``clip.weights``, which belong to another model; the toy profile pretrains it and gives none), the pretraining loss
(a name of ``vlcomp.losses.LOSSES``; default ``clip``), the benchmarks its evaluation scores (default
``evaluate.benchmarks``) and what it stands for."""


def base_key(family: str | None, chain: str) -> str:
    """The base of chain ``chain`` (``b0``) of the base-model family ``family``: the chain itself for the default base
    (``clip`` pretrained with the CLIP loss), ``<family>-<chain>`` for another (``vit-b0``)."""
    return chain if family is None else f"{family}-{chain}"


def _base_models(params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    families = params.get("base_models") or {}
    if not isinstance(families, dict):
        raise ValueError(f"params: base_models={families!r} must map a family to {{{', '.join(BASE_MODEL_KEYS)}}}")
    for family, values in families.items():
        if not isinstance(values, dict):
            raise ValueError(f"params: base_models.{family}={values!r} must be a mapping ({', '.join(BASE_MODEL_KEYS)})")
        unknown = sorted(set(values) - set(BASE_MODEL_KEYS))
        if unknown:
            raise ValueError(f"params: base_models.{family}: unknown key(s) {unknown}; known: {', '.join(BASE_MODEL_KEYS)}")
        if not str(family).replace("_", "").isalnum() or str(family)[:1] == "b" and str(family)[1:].isdigit():
            raise ValueError(f"params: base_models.{family}: a name must be alphanumeric and not look like a chain (b<k>)")
    return families


def base_method(params: dict[str, Any], base: str) -> str:
    """The method name of base ``base``'s evaluated model: :data:`BASE_METHOD` for a chain's default base,
    ``clip_<family>`` for another family (``clip_vit``, ``clip_cyclip``), so a report's CLIP rows aggregate the default
    bases only."""
    return base_model_method(((params.get("bases") or {}).get(base) or {}).get("family"))


def base_model_method(family: str | None) -> str:
    """The method of the un-fine-tuned evaluations of base-model family ``family`` (:func:`base_method`'s naming):
    :data:`BASE_METHOD` for the default base (``family`` None), ``clip_<family>`` for another."""
    return f"{BASE_METHOD}_{family}" if family else BASE_METHOD


def base_model_name(base: str) -> str:
    """The evaluated base model of chain ``base`` (``clip-b0``)."""
    return f"{BASE_METHOD}-{base}"


MLM_DIR = "models/mlm"
"""The ``train_mlm`` stage's output: the small masked LM the unmasking generators fill with."""
NO_MODEL_DIR = "data/world"
"""The ``input`` of a ``mine@`` run whose generator reads neither a base model nor the masked LM (a stage's dependency
list has a fixed shape under DVC's ``foreach``; ``data/world`` is a dependency of every such run anyway)."""


def base_dir(base: str) -> str:
    """The ``pretrain@<base>`` output a run of chain base ``base`` reads (``models/base/<base>``)."""
    return f"models/base/{base}"


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
      ``evaluate_base@b<k>`` (model ``clip-b<k>``); and, on the chains where a method with ``base_model: <family>``
      runs, that family's base model, ``<family>-b<k>: {seed: k, family: <family>, arch?, loss?}``
      (``base_models.<family>``: TSVLC's ViT-B/16 and CyCLIP rows);
    - ``parsing``: ``<split>: {mined_by: [generator, ...]}`` per split a generator of ``mine`` reads (``parse@<split>``:
      its captions parsed with spaCy once, for every chain);
    - ``mining``: the runs of the ``mine@<key>`` stages, each ``{generator, split, input[, base]}`` (``input``: the
      folder the generator reads besides the world): ``<generator>-b<k>`` with ``base: b<k>`` and ``input:
      models/base/b<k>`` per chain for a generator of ``mine`` that reads the base model (NegCLIP's hard images),
      ``<generator>`` once for every chain for one that reads no base model (TSVLC's text generators; ``input``
      :data:`MLM_DIR` or :data:`NO_MODEL_DIR`);
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
    families = _base_models(params)
    methods = params.get("methods") or {}
    mine = params.get("mine") or {}
    mining: dict[str, Any] = {}
    parsing: dict[str, Any] = {}
    for g in mine:
        split = (mine[g] or {}).get("split")
        if not isinstance(split, str) or not split:
            raise ValueError(f"params: mine.{g}.split={split!r} must name the world split it mines")
        parsing.setdefault(split, {"mined_by": []})["mined_by"].append(g)
        reads = generator_reads(registered_generator(mine, g))
        if reads == "base":
            mining.update({f"{g}-{b}": {"generator": g, "base": b, "split": split, "input": base_dir(b)} for b in bases})
        else:
            mining[g] = {"generator": g, "split": split, "input": MLM_DIR if reads == "mlm" else NO_MODEL_DIR}
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

    def family_of(method: str) -> str | None:
        family = (methods[method] or {}).get("base_model")
        if family is not None and family not in families:
            raise ValueError(f"params: methods.{method}.base_model={family!r} is not a family of base_models "
                             f"({', '.join(families) or 'none'})")
        return family

    def add_base(family: str | None, chain: str) -> str:
        key = base_key(family, chain)
        if key not in bases:
            # what pretraining reads only: the evaluation's benchmarks stay in base_models.<family>.benchmarks
            # (evaluate_base@<b> reads them there), so scoring a base on one more benchmark re-trains nothing
            bases[key] = {"seed": bases[chain]["seed"], "family": family,
                          **{k: v for k, v in families[family].items() if k not in BASE_EVALUATION_KEYS}}
        return key

    def base_of(method: str, chain: str) -> str:
        """The base ``method`` starts from on ``chain``, added to ``bases`` (and its per-chain mined data to
        ``mining``) when it is another family's base model."""
        family = family_of(method)
        key = add_base(family, chain)
        for g in filter(None, ((methods[method] or {}).get("generator"), (methods[method] or {}).get("positives_from"))):
            if g in mine and generator_reads(registered_generator(mine, g)) == "base":
                mining.setdefault(f"{g}-{key}", {"generator": g, "base": key, "split": mine[g]["split"],
                                                 "input": base_dir(key)})
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
    # A family no method starts from is a base model in its own right (Hard Positives' Table 8 scores base models as
    # they are): pretrained on the first chain and scored on its benchmarks. Families methods start from are already
    # in `bases`, on the chains those methods run on, in the order the methods name them.
    for family in families:
        if not any(values.get("family") == family for values in bases.values()):
            add_base(family, first)
    return {**params, "bases": bases, "parsing": parsing, "mining": mining, "selections": selections,
            "variants": variants}


def chain_seed(params: dict[str, Any], base: str) -> int:
    """The seed of chain ``base`` (``b<k>``): derived from ``root_seed`` and the chain's base seed, so every
    stage of the chain (pretraining, mining, LR selection, fine-tuning) draws its own stream from it."""
    from .seeding import derive_seed

    bases = section(params, "bases")
    if base not in bases:
        raise ValueError(f"params: unknown base {base!r}; bases: {', '.join(bases) or 'none'}")
    family = bases[base].get("family")
    return derive_seed(section(params, "root_seed"), "base", section(params, f"bases.{base}.seed"),
                       *([family] if family else []))


def resolve_layers(*layers: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge params layers in order (:func:`merge_overlay`), then derive the runs (``bases``, ``mining``,
    ``selections``, ``variants``: :func:`derive_variants`). Idempotent on a resolved params file."""
    params: dict[str, Any] = {}
    for layer in layers:
        check_renamed(layer, "params layer")
        params = merge_overlay(params, layer)
    return derive_variants(params)


def profile_params(name: str, root: str | Path = ".", *overlays: dict[str, Any]) -> dict[str, Any]:
    """The resolved params of profile ``name``: ``profiles/common.yaml`` + ``profiles/<name>.yaml`` (+ overlays,
    e.g. the smoke sizes). This is what ``python -m vlcomp.profiles <name>`` writes to ``params.yaml``."""
    if name in RENAMED_PROFILES:
        raise ValueError(f"profile {name!r} was renamed {RENAMED_PROFILES[name]!r}")
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
    """``$VAR`` / ``${VAR}`` and ``~`` expanded: the one expander of every path in params (``real_inputs``,
    ``clip.weights``, ``released_models``, ``$VLCOMP_DATA`` ...). With ``strict`` a variable left unset is an error
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

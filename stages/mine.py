"""Stages `mine@<generator>-<base>` and `generate@<generator>`: the training data a method's generator derives from a
split (vlcomp.generators).

- `mine@<generator>-<base>` (params `mining.<generator>-<base>`): a generator that reads the chain's base model
  (NegCLIP: swap negatives, and hard images by the base model's features), seeded by the chain;
- `generate@<generator>` (params `generating.<generator>`): a generator that reads no chain (TSVLC's text
  generators), run once for every chain and seeded by `base.seed`; `--model` is the small masked LM of `train_mlm`
  for the unmasking generators (data/world, already a dependency, for the others).

Both read the split's captions as the `parse@<split>` stage parsed them."""

from __future__ import annotations

from pathlib import Path

from _common import parser, run
from vlcomp.config import build, chain_seed, generator_config, load_params, registered_generator, section
from vlcomp.generators import GENERATORS, check_written
from vlcomp.io import atomic_dir, write_json
from vlcomp.seeding import derive_seed
from vlcomp.text.nlp import load_spacy
from vlcomp.tracking import TRAINING_EXPERIMENT, paper_tag, stage_run


def main() -> None:
    p = parser(__doc__)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--mining", help="a key of params mining, e.g. negclip-b0")
    mode.add_argument("--generating", help="a key of params generating, e.g. tsvlc_rb")
    p.add_argument("--world", required=True)
    p.add_argument("--base", help="--mining: the chain's base model folder")
    p.add_argument("--model", help="--generating: the folder of what the generator reads (models/mlm or data/world)")
    p.add_argument("--parsed", help="the parse stage's output for the mined split (skips parsing the captions)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    key = args.mining or args.generating
    run_spec = section(params, f"{'mining' if args.mining else 'generating'}.{key}")
    generator = run_spec["generator"]  # the mined dataset (a key of mine); its registered generator may differ
    registered = registered_generator(section(params, "mine"), generator)
    gen = GENERATORS.get(registered)
    cfg = build(gen.config, generator_config(section(params, "mine"), generator), f"mine.{generator}")
    used = {f"mine.{generator}": section(params, f"mine.{generator}"), "base.seed": section(params, "base.seed"),
            "nlp.spacy_model": section(params, "nlp.spacy_model")}
    if args.mining:
        if gen.reads != "base" or not args.base:
            raise ValueError(f"--mining {key}: generator {generator!r} reads {gen.reads!r}; mine@ runs need a "
                             "generator of the base model and --base")
        from vlcomp.device import resolve_device
        from vlcomp.models.factory import create_model, with_weights
        from vlcomp.train.recipes import model_spec

        base = run_spec["base"]
        seed = chain_seed(params, base)
        model = create_model(with_weights(model_spec(params, base), Path(args.base) / "model.pt"))
        model.to(resolve_device(getattr(cfg, "device", "auto"), param="mine.device"))  # GPU in the paper profile
        used |= {f"mining.{key}": run_spec, f"bases.{base}": section(params, f"bases.{base}")}
        stage, tags = f"mine@{key}", {"base": base}
    else:
        if gen.reads == "base":
            raise ValueError(f"--generating {key}: generator {generator!r} reads the base model; run it as mine@")
        seed = derive_seed(section(params, "base.seed"), "generate", generator)
        model = None
        if gen.reads == "mlm":
            from vlcomp.text.mlm import load_mlm

            if not args.model:
                raise ValueError(f"--generating {key}: generator {generator!r} reads the masked LM; give --model")
            model = load_mlm(args.model)
        used |= {f"generating.{key}": run_spec}
        stage, tags = f"generate@{key}", {}
    nlp = load_spacy(section(params, "nlp.spacy_model"))
    with stage_run(stage, experiment=TRAINING_EXPERIMENT, profile=params["profile"],
                   paper=paper_tag(params, generator=generator), method=generator, params=used, **tags) as tr:
        with atomic_dir(args.out) as tmp:
            summary = gen.run(cfg, world=args.world, model=model, nlp=nlp, seed=seed, out_dir=tmp, parsed=args.parsed)
            check_written(registered, gen, tmp)
            write_json(tmp / "summary.json", summary)
        tr.log_metrics(summary)


if __name__ == "__main__":
    run(main)

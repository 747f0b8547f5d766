"""Stage `mine@<key>` (params `mining.<key>`): the training data a method's generator derives from a split
(vlcomp.generators), one run per key of the derived params section `mining`:

- `mine@<generator>-<base>`: a generator that reads the chain's base model (NegCLIP: swap negatives, and hard images
  by the base model's features), seeded by the chain; `--input` is the base model's folder;
- `mine@<generator>`: a generator that reads no base model (TSVLC's text generators), run once for every chain and
  seeded by `root_seed`; `--input` is the small masked LM of `train_mlm` for the unmasking generators (data/world,
  already a dependency, for the others).

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
    p.add_argument("--mining", required=True, help="a key of params mining, e.g. negclip-b0 or tsvlc_rb")
    p.add_argument("--world", required=True)
    p.add_argument("--input", help="the folder the generator reads besides the world (params mining.<key>.input): "
                                   "the chain's base model, models/mlm or data/world")
    p.add_argument("--parsed", help="the parse stage's output for the mined split (skips parsing the captions)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    key = args.mining
    run_spec = section(params, f"mining.{key}")
    generator = run_spec["generator"]  # the mined dataset (a key of mine); its registered generator may differ
    registered = registered_generator(section(params, "mine"), generator)
    gen = GENERATORS.get(registered)
    cfg = build(gen.config, generator_config(section(params, "mine"), generator), f"mine.{generator}")
    used = {f"mine.{generator}": section(params, f"mine.{generator}"), "root_seed": section(params, "root_seed"),
            "nlp.spacy_model": section(params, "nlp.spacy_model"), f"mining.{key}": run_spec}
    base = run_spec.get("base")
    if gen.reads == "base":
        if not base or not args.input:
            raise ValueError(f"--mining {key}: generator {generator!r} reads the base model; its run needs a base "
                             f"(params mining.{key}.base) and --input")
        from vlcomp.device import resolve_device
        from vlcomp.models.factory import create_model, with_weights
        from vlcomp.train.recipes import model_spec

        seed = chain_seed(params, base)
        model = create_model(with_weights(model_spec(params, base), Path(args.input) / "model.pt"))
        model.to(resolve_device(getattr(cfg, "device", "auto"), param="mine.device"))  # GPU in the real profile
        used |= {f"bases.{base}": section(params, f"bases.{base}")}
        tags = {"base": base}
    else:
        if base:
            raise ValueError(f"--mining {key}: generator {generator!r} reads no base model, but params "
                             f"mining.{key}.base={base!r}")
        # the stream's label "generate" is older than the one name mine@; it stays so the mined data stay the same
        seed = derive_seed(section(params, "root_seed"), "generate", generator)
        model = None
        if gen.reads == "mlm":
            from vlcomp.text.mlm import load_mlm

            if not args.input:
                raise ValueError(f"--mining {key}: generator {generator!r} reads the masked LM; give --input")
            model = load_mlm(args.input)
        tags = {}
    stage = f"mine@{key}"
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

"""Stage `mine@<generator>-<base>`: hard negatives (and NN hard images) for fine-tuning, mined with one chain's base
model and seed (params `mining.<generator>-<base>`), from the split's captions as the `parse@<split>` stage parsed
them."""

from __future__ import annotations

from pathlib import Path

from _common import parser, run
from vlcomp.config import build, chain_seed, load_params, section
from vlcomp.device import resolve_device
from vlcomp.generators import GENERATORS, check_written
from vlcomp.io import atomic_dir, write_json
from vlcomp.models.factory import create_model, with_weights
from vlcomp.text.nlp import load_spacy
from vlcomp.tracking import TRAINING_EXPERIMENT, paper_tag, stage_run
from vlcomp.train.recipes import model_spec


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--mining", required=True, help="a key of params mining, e.g. negclip-b0")
    p.add_argument("--world", required=True)
    p.add_argument("--base", required=True)
    p.add_argument("--parsed", help="the parse stage's output for the mined split (skips parsing the captions)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    run_spec = section(params, f"mining.{args.mining}")
    generator, base = run_spec["generator"], run_spec["base"]
    gen = GENERATORS.get(generator)
    cfg = build(gen.config, section(params, f"mine.{generator}"), f"mine.{generator}")
    seed = chain_seed(params, base)
    model = create_model(with_weights(model_spec(params), Path(args.base) / "model.pt"))
    model.to(resolve_device(getattr(cfg, "device", "auto"), param="mine.device"))  # the paper profile's GPU; a no-op on the CPU
    nlp = load_spacy(section(params, "nlp.spacy_model"))
    used = {f"mine.{generator}": section(params, f"mine.{generator}"), f"mining.{args.mining}": run_spec,
            "base.seed": section(params, "base.seed"), f"bases.{base}": section(params, f"bases.{base}"),
            "nlp.spacy_model": section(params, "nlp.spacy_model")}
    with stage_run(f"mine@{args.mining}", experiment=TRAINING_EXPERIMENT, profile=params["profile"],
                   paper=paper_tag(params, generator=generator),
                   method=generator, base=base, params=used) as tr:
        with atomic_dir(args.out) as tmp:
            summary = gen.run(cfg, world=args.world, model=model, nlp=nlp, seed=seed, out_dir=tmp, parsed=args.parsed)
            check_written(generator, gen, tmp)
            write_json(tmp / "summary.json", summary)
        tr.log_metrics(summary)


if __name__ == "__main__":
    run(main)

"""Stage `parse@<split>`: parse a world split's captions with spaCy once (params `nlp.spacy_model`), for every
mining stage of every chain that mines that split (vlcomp.text.parsed)."""

from __future__ import annotations

from _common import parser, run
from vlcomp.config import load_params, section
from vlcomp.io import atomic_dir
from vlcomp.text.nlp import load_spacy
from vlcomp.text.parsed import parse_captions, write_parses
from vlcomp.tracking import TRAINING_EXPERIMENT, paper_tag, stage_run
from vlcomp.world import Split


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--split", required=True, help="a world split, e.g. coco_train")
    p.add_argument("--world", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    if args.split not in section(params, "parsing"):
        raise ValueError(f"--split {args.split!r}: not in params parsing ({', '.join(section(params, 'parsing'))})")
    nlp = load_spacy(section(params, "nlp.spacy_model"))
    captions = [c for caps in Split(args.world, args.split).captions() for c in caps]
    used = {"nlp.spacy_model": section(params, "nlp.spacy_model"), f"parsing.{args.split}": section(params, f"parsing.{args.split}")}
    with stage_run(f"parse@{args.split}", experiment=TRAINING_EXPERIMENT, profile=params["profile"],
                   paper=paper_tag(params), params=used) as tr:
        with atomic_dir(args.out) as tmp:
            summary = write_parses(tmp, parse_captions(captions, nlp), nlp, args.split)
        tr.log_metrics({"parse/n_captions": summary["n_captions"]})


if __name__ == "__main__":
    run(main)

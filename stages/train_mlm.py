"""Stage `train_mlm`: the small masked language model the unmasking generators fill masked words with (TSVLC's LLM
negatives; CE-CLIP reuses it). Toy profile: a tiny BERT trained here on the world's captions (params `mlm`,
vlcomp.profiles.toy.mlm); real profile: the named model (distilroberta-base, the reference's fill-mask default)
resolved from the local Hugging Face cache and saved as is (vlcomp.profiles.real.mlm), or, with `mlm.model: null`, only
a note that none is configured (load_mlm on it then fails naming the folder)."""

from __future__ import annotations

from _common import parser, run
from vlcomp.config import load_params, section
from vlcomp.io import atomic_dir, without_timings, write_json
from vlcomp.text.mlm import save_mlm
from vlcomp.tracking import TRAINING_EXPERIMENT, stage_run


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--world", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    if params["profile"] == "real":
        from vlcomp.profiles.real.mlm import masked_lm
    else:
        from vlcomp.profiles.toy.mlm import masked_lm
    used = {"mlm": section(params, "mlm"), "root_seed": section(params, "root_seed")}
    with stage_run("train_mlm", experiment=TRAINING_EXPERIMENT, profile=params["profile"], paper="tsvlc",
                   method="mlm", params=used) as tr:
        model, tokenizer, history, about = masked_lm(
            params, args.world, on_log=lambda step, rec: tr.log_metrics({f"train/{k}": v for k, v in rec.items()},
                                                                        step=step))
        with atomic_dir(args.out) as tmp:
            if model is not None:  # None: the profile configures no masked LM (real profile, mlm.model: null)
                save_mlm(model, tokenizer, tmp)
            write_json(tmp / "history.json", without_timings(history))  # timings: MLflow only
            write_json(tmp / "about.json", about)
        if model is None:
            return
        tr.log_metrics({"mlm/n_parameters": float(sum(p.numel() for p in model.parameters())),
                        "mlm/vocab_size": float(len(tokenizer))})


if __name__ == "__main__":
    run(main)

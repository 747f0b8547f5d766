# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] tags=["profile-real"]
# # ARO / NegCLIP — reproduction report, real profile
#
# Yuksekgonul et al., *When and why vision-language models behave like bags-of-words, and what to do about it?*
# (ICLR 2023). The real profile runs real weights on the released data: OpenAI CLIP ViT-B/32, the CLIP-FT and
# NegCLIP variants fine-tuned by this pipeline, and the papers' released checkpoints. Every number below is read
# from the DVC metrics tree, next to the paper's printed numbers; the released checkpoints are also compared with
# the printed numbers of the CE-CLIP, CoN-CLIP, TSVLC and Hard-Positives papers. All logic lives in
# `vlcomp.reporting` (`tree`, `comparison`, `released_values` and `papers.aro.comparison`); tables are written to
# `tables/*.csv` and `tables/*.md`.

# %% tags=["parameters"]
# One template for both profiles: cells tagged profile-toy / profile-real run only for that `profile`
# (vlcomp.reporting.notebook.select_profile drops the others before papermill runs the notebook).
profile = "toy"  # "toy" or "real"
metrics_dir = "metrics"
world_dir = "data/world"  # toy profile only
benchmarks_dir = "data/benchmarks"  # toy profile only
models_dir = "models"
out_dir = "reports/papers/aro"
params_path = "params.yaml"
calibration_csv = "calibration/aro_world.csv"  # toy profile only
mined_root = "data/mined"  # toy profile only

# %% tags=["profile-toy"]
# The page is declared in vlcomp.reporting.papers.aro.report (sections, parts, the artifacts each renders) and
# rendered by vlcomp.reporting.scaffold: verdicts, the artifact checklist and the headline table first.
from vlcomp.reporting.papers import PAPERS  # noqa: E402 (the parameters cell comes first)
from vlcomp.reporting.papers.aro import toy as R  # noqa: E402
from vlcomp.reporting.papers.aro.report import REPORT  # noqa: E402
from vlcomp.reporting.scaffold import display_page  # noqa: E402

ctx = R.load(metrics_dir, world_dir, benchmarks_dir, models_dir, params_path, calibration_csv, mined_root)
page = display_page(REPORT, ctx, out_dir, PAPERS.get("aro").artifacts)

# %% tags=["profile-real"]
from IPython.display import Markdown, display  # noqa: E402 (the parameters cell comes first)

from vlcomp.reporting import comparison as C  # noqa: E402
from vlcomp.reporting import released_values as RV  # noqa: E402
from vlcomp.reporting import tree as T  # noqa: E402
from vlcomp.reporting.papers.aro import comparison as A  # noqa: E402
from vlcomp.reporting.papers.aro.inconsistencies import notes  # noqa: E402

tree = A.load(metrics_dir, params_path, models_dir)
display(Markdown(A.intro_markdown(tree)))

# %% [markdown] tags=["profile-real"]
# ## ARO-T6 — CLIP vs CLIP-FT vs NegCLIP (Table 6)
# Compositional tasks, retrieval R@1, and the zero-shot classification rows the real profile does not evaluate
# (their paper value is shown, the reproduced cell stays empty). Columns: reproduced value per model, then the
# paper's value per paper model.

# %% tags=["profile-real"]
display(Markdown(C.section(A.t6(tree), out_dir, "ARO-T6", index=("group", "task"), notes=notes(["ARO-T6"]))))

# %% [markdown] tags=["profile-real"]
# ## ARO-T2 — VG-Relation per relation (Table 2)
# Macro rows (overall, spatial, verbs) for every model, then per-relation accuracy for every model present.
# Relations the ARO code excludes as symmetric have no reproduced value.

# %% tags=["profile-real"]
display(Markdown(C.section(A.t2(tree), out_dir, "ARO-T2", index=("section", "relation", "paper_n_samples"),
                          notes=notes(["ARO-T2", "ARO-X2"]))))

# %% [markdown] tags=["profile-real"]
# ## ARO-X1 — VG-Attribution macro accuracy (in-text numbers)

# %% tags=["profile-real"]
display(Markdown(C.section(A.x1(tree), out_dir, "ARO-X1", notes=notes(["ARO-X1"]))))

# %% [markdown] tags=["profile-real"]
# ## ARO-T5 / T6 — COCO-Order and Flickr30k-Order
# Accuracy is the mean over order (perturbation) seeds, `std_over_order_seeds` its std over them, a separate
# quantity; mean rows give the std over whole-chain runs (`std_over_chains`). Paper: Table 5 (mean ± std over its
# perturbation seeds) where printed, else Table 6.

# %% tags=["profile-real"]
display(Markdown(C.section(A.order_table(tree), out_dir, "ARO-order", notes=notes(["ARO-T5"]))))

# %% [markdown] tags=["profile-real"]
# ## Released checkpoints on every benchmark
# One row per released checkpoint, one column per headline metric found in their metrics.

# %% tags=["profile-real"]
display(Markdown(C.section(T.released_wide(tree), out_dir, "released_all_benchmarks")))
display(Markdown(f"*Note:* {RV.OTHER_PAPERS_NOTE}"))

# %% [markdown] tags=["profile-real"]
# ## CE-CLIP — released checkpoints next to the paper's numbers
# Zhang et al., CVPR 2024: ARO and VALSE (CE-T1), VL-CheckList (CE-T2), SugarCrepe (CE-T3), the CLIP row of the
# loss ablation (CE-T4) and the compositional scores and COCO R@5 of CE-T5, for CLIP, NegCLIP, CE-CLIP and BLIP.
# Each row is one printed metric: the reproduced value of every model mapping to the paper's model (released
# checkpoints by name, pipeline models by method), then the printed value (`paper: <model>`). The long table
# `tables/ceclip_released.csv` adds the difference (reproduced - paper), status notes and provenance.

# %% tags=["profile-real"]
display(Markdown(RV.released_section(tree, "ceclip", out_dir)))

# %% [markdown] tags=["profile-real"]
# ## CoN-CLIP — released checkpoints next to the paper's numbers
# Singh et al.: CC-Neg accuracy on the full set (CONCLIP-T2, comparable only with `ccneg_split: all`) and the 40k
# held-out split (CONCLIP-T3), by negation word and K (CONCLIP-T7 to T12), SugarCREPE (CONCLIP-T5, T6, T14), and
# the in-text "no" numbers (CONCLIP-N1), for CLIP, NegCLIP, FLAVA, BLIP and CoN-CLIP (ViT-B/32).

# %% tags=["profile-real"]
display(Markdown(RV.released_section(tree, "conclip", out_dir)))

# %% [markdown] tags=["profile-real"]
# ## TSVLC — released checkpoints next to the paper's numbers
# Doveh et al., CVPR 2023: VL-CheckList Object / Attribute / Relation (TSVLC-T1a, T1g, T2) and the seven
# Attribute / Relation subtypes (TSVLC-T3) for CLIP ViT-B/32 and the LoRA variant RB+LLM Negs, the adapter the
# `tsvlc` checkpoint loads. TSVLC-T3 columns are mapped through the evaluation code's shifted labels (see notes).

# %% tags=["profile-real"]
display(Markdown(RV.released_section(tree, "tsvlc", out_dir)))

# %% [markdown] tags=["profile-real"]
# ## Hard Positives — released checkpoints next to the paper's numbers
# Kamath et al., ECCV 2024: REPLACE and SWAP Orig / Aug / Aug - Orig / Brittleness (HP-T1, T3, T8), REPLACE split
# into Relations and Attributes (HP-T7), and CLIP's COCO / Flickr30k R@1 (HP-T10), for CLIP, NegCLIP and SVLC
# (= the `tsvlc` checkpoint).

# %% tags=["profile-real"]
display(Markdown(RV.released_section(tree, "hardpos", out_dir)))

# %% [markdown] tags=["profile-real"]
# ### This pipeline's models on the same benchmarks
# The base model and the fine-tuned variants run the same released-format benchmarks (not a table of the paper).

# %% tags=["profile-real"]
display(Markdown(C.section(T.benchmarks_wide(tree, (T.PIPELINE,)), out_dir, "pipeline_all_benchmarks")))

# %% [markdown] tags=["profile-real"]
# ## Provenance

# %% tags=["profile-real"]
display(Markdown(C.section(T.provenance_table(tree), out_dir, "provenance", legend=T.PROVENANCE_LEGEND)))
display(Markdown("**Ignored folders** (a metrics.json whose provenance is not real-profile):"))
display(Markdown(C.section(T.ignored_table(tree), out_dir, "ignored_folders",
                          legend="Folders, not measurements: no spread.")))

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
# # TSVLC — reproduction report, real profile
#
# Doveh et al., *Teaching Structured Vision & Language Concepts to Vision & Language Models* (CVPR 2023). The
# real profile trains TSVLC's rows on the real corpora from the released weights and scores them on the released
# benchmark files: the sections below list which are evaluated, put them next to the paper's printed tables, and
# compare the released TSVLC checkpoint with them. All logic lives in `vlcomp.reporting.papers.tsvlc` and
# `vlcomp.reporting.released_values`.

# %% tags=["parameters"]
# One template for both profiles: cells tagged profile-toy / profile-real run only for that `profile`
# (vlcomp.reporting.notebook.select_profile drops the others before papermill runs the notebook).
profile = "toy"  # "toy" or "real"
metrics_dir = "metrics"
world_dir = "data/world"  # toy profile only
benchmarks_dir = "data/benchmarks"  # not read by this report
models_dir = "models"
out_dir = "reports/papers/tsvlc"
params_path = "params.yaml"
calibration_csv = "calibration/tsvlc_world.csv"  # not read by this report
mined_root = "data/mined"  # toy profile only

# %% tags=["profile-toy"]
# The page is declared in vlcomp.reporting.papers.tsvlc.report (sections, parts, the artifacts each renders) and
# rendered by vlcomp.reporting.scaffold: verdicts, the headline table and the artifact checklist first.
from vlcomp.reporting.papers import PAPERS  # noqa: E402 (the parameters cell comes first)
from vlcomp.reporting.papers.tsvlc import toy as R  # noqa: E402
from vlcomp.reporting.papers.tsvlc.report import REPORT  # noqa: E402
from vlcomp.reporting.scaffold import display_page  # noqa: E402

ctx = R.load(metrics_dir, world_dir, models_dir, params_path, mined_root)
page = display_page(REPORT, ctx, out_dir, PAPERS.get("tsvlc").artifacts)

# %% tags=["profile-real"]
from IPython.display import HTML, Markdown, display  # noqa: E402 (the parameters cell comes first)

from vlcomp.reporting import comparison as C  # noqa: E402
from vlcomp.reporting import released_values as RV  # noqa: E402
from vlcomp.reporting import tree as T  # noqa: E402
from vlcomp.reporting.papers.tsvlc import real as TP  # noqa: E402
from vlcomp.reporting.papers.tsvlc.inconsistencies import notes  # noqa: E402

tree = TP.load(metrics_dir, params_path, models_dir)
display(Markdown(TP.intro_markdown(tree)))

# %% [markdown] tags=["profile-real"]
# ## The TSVLC methods in this profile

# %% tags=["profile-real"]
display(Markdown(C.section(TP.methods_status(tree), out_dir, "tsvlc_methods",
                          legend="A status list, not a measurement: no spread.")))

# %% [markdown] tags=["profile-real"]
# ## TSVLC-T1a – T1g, T2, T3 — reproduced in this profile
# The same tables as the toy report's, over this profile's runs: reproduced cells (one run per row: no spread)
# next to the printed ones; rows whose models are not evaluated read *not run*.

# %% tags=["profile-real"]
from vlcomp.reporting.papers.tsvlc import toy as R  # noqa: E402
from vlcomp.reporting.render import show  # noqa: E402

ctx = R.load(metrics_dir, world_dir, models_dir, params_path, mined_root)
display(HTML(show(out_dir, "TSVLC-T1a", R.t1a(ctx))))
for artifact in R.SECTION_ARTIFACTS:
    display(Markdown(R.section_markdown(artifact, toy=False)))
    display(HTML(show(out_dir, artifact, R.t1_section(ctx, artifact))))
display(HTML(show(out_dir, "TSVLC-T2", R.t2(ctx))))
display(HTML(show(out_dir, "TSVLC-T3", R.t3(ctx))))

# %% [markdown] tags=["profile-real"]
# ## TSVLC-T1a – T1g, T2, T3 — the printed tables

# %% tags=["profile-real"]
display(Markdown(C.section(TP.printed_tables(), out_dir, "TSVLC-T1_T2_printed",
                          legend="Printed values only, as printed.",
                          notes=notes(["TSVLC-T1a", "TSVLC-T2"]))))
display(Markdown(C.section(TP.printed_t3(), out_dir, "TSVLC-T3_printed",
                          legend="Printed values only, as printed.", notes=notes(["TSVLC-T3"]))))

# %% [markdown] tags=["profile-real"]
# ## TSVLC — released checkpoint next to the paper's numbers
# VL-CheckList Object / Attribute / Relation (TSVLC-T1a, T1g, T2) and the seven Attribute / Relation subtypes
# (TSVLC-T3) for CLIP ViT-B/32 and the LoRA variant RB+LLM Negs, the adapter the `tsvlc` checkpoint loads.

# %% tags=["profile-real"]
display(Markdown(RV.released_section(tree, "tsvlc", out_dir)))

# %% [markdown] tags=["profile-real"]
# ## Provenance

# %% tags=["profile-real"]
display(Markdown(C.section(T.provenance_table(tree), out_dir, "provenance", legend=T.PROVENANCE_LEGEND)))

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

# %% tags=["parameters"]
# One template for both profiles: cells tagged profile-toy / profile-real run only for that `profile`
# (vlcomp.reporting.notebook.select_profile drops the others before papermill runs the notebook).
profile = "toy"  # "toy" or "real"
metrics_dir = "metrics"
world_dir = "data/world"  # not read by this report
benchmarks_dir = "data/benchmarks"  # the REPLACE / SWAP twins (Tables 4-6, the figures' images)
models_dir = "models"
out_dir = "reports/papers/hard_positives"
params_path = "params.yaml"
calibration_csv = "calibration/hard_positives_world.csv"  # not read by this report
mined_root = "data/mined"  # the hardpos generator's summaries (HP-D3 / D4)

# %% tags=["profile-toy"]
# The page is declared in vlcomp.reporting.papers.hard_positives.report (sections, parts, the artifacts each
# renders) and rendered by vlcomp.reporting.scaffold: verdicts, the headline table and the artifact checklist first.
from vlcomp.reporting.papers import PAPERS  # noqa: E402 (the parameters cell comes first)
from vlcomp.reporting.papers.hard_positives import toy as R  # noqa: E402
from vlcomp.reporting.papers.hard_positives.report import REPORT  # noqa: E402
from vlcomp.reporting.scaffold import display_page  # noqa: E402

ctx = R.load(metrics_dir, world_dir, benchmarks_dir, models_dir, params_path, mined_root)
page = display_page(REPORT, ctx, out_dir, PAPERS.get("hard_positives").artifacts)

# %% tags=["profile-real"]
# The real profile's page is declared in the same module (REAL_REPORT: the same tables over this profile's runs,
# the printed tables, the released checkpoints next to their printed numbers), rendered by the same scaffold.
from vlcomp.reporting.papers import PAPERS  # noqa: E402 (the parameters cell comes first)
from vlcomp.reporting.papers.hard_positives import real as RP  # noqa: E402
from vlcomp.reporting.papers.hard_positives.report import REAL_REPORT  # noqa: E402
from vlcomp.reporting.scaffold import display_page  # noqa: E402

ctx = RP.load(metrics_dir, world_dir, benchmarks_dir, models_dir, params_path, mined_root)
page = display_page(REAL_REPORT, ctx, out_dir, PAPERS.get("hard_positives").artifacts)

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
# The real profile's page is declared in the same module (REAL_REPORT: the metrics tree's comparison tables next
# to ARO's printed numbers, the released checkpoints next to the five papers'), rendered by the same scaffold.
from vlcomp.reporting.papers import PAPERS  # noqa: E402 (the parameters cell comes first)
from vlcomp.reporting.papers.aro import real as A  # noqa: E402
from vlcomp.reporting.papers.aro.report import REAL_REPORT  # noqa: E402
from vlcomp.reporting.scaffold import display_page  # noqa: E402

tree = A.load(metrics_dir, params_path, models_dir)
page = display_page(REAL_REPORT, tree, out_dir, PAPERS.get("aro").artifacts)

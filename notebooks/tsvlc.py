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
# The real profile's page is declared in the same module (REAL_REPORT: the same tables over this profile's runs,
# the printed tables, the released checkpoint next to its printed numbers), rendered by the same scaffold.
from vlcomp.reporting.papers import PAPERS  # noqa: E402 (the parameters cell comes first)
from vlcomp.reporting.papers.tsvlc import real as RP  # noqa: E402
from vlcomp.reporting.papers.tsvlc.report import REAL_REPORT  # noqa: E402
from vlcomp.reporting.scaffold import display_page  # noqa: E402

ctx = RP.load(metrics_dir, world_dir, models_dir, params_path, mined_root)
page = display_page(REAL_REPORT, ctx, out_dir, PAPERS.get("tsvlc").artifacts)

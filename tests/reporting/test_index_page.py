"""reports/index.html is a landing page: the papers with their reports and verdicts, what the pipeline ran (profile,
chains, models), the model x metric matrix, and where the run records and the MLflow UI are."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from vlcomp.reporting.collect import methods_of
from vlcomp.reporting.index_page import PaperReport, landing_page, paper_report, runs_table
from vlcomp.reporting.matrix import write_matrix
from vlcomp.tracking import ui_url

PARAMS = {"profile": "toy", "base_seeds": [0, 1], "seeds": {"negclip": [0]},
          "bases": {"b0": {"seed": 0}, "b1": {"seed": 1}},
          "variants": {"negclip-b0s0": {"method": "negclip", "base": "b0", "seed": 0},
                       "negclip-b1s0": {"method": "negclip", "base": "b1", "seed": 0}},
          "methods": {"negclip": {"label": "NegCLIP", "paper": "aro"}}}

NAN = re.compile(r"\bnan\b", re.IGNORECASE)  # a cell that reads "nan"


def _long() -> pd.DataFrame:
    rows = [(f"clip-b{k}", "clip", f"b{k}", str(k), "", "aro/vg_relation/macro_acc", 0.5 + 0.01 * k, f"evaluate_base@b{k}")
            for k in (0, 1)]
    rows += [("negclip-b0s0", "negclip", "b0", "0", "0", "aro/vg_relation/macro_acc", 0.6, "evaluate@negclip-b0s0")]
    return pd.DataFrame(rows, columns=["model", "method", "base", "base_seed", "seed", "key", "value", "dvc_stage"])


def test_paper_report_reads_the_ledger_and_links_relatively(tmp_path):
    report = tmp_path / "reports" / "papers" / "aro"
    (report / "tables").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match="index.html: report missing"):
        paper_report("aro", "ARO", report, tmp_path / "reports" / "index.html")
    (report / "index.html").write_text("<html/>")
    pd.DataFrame({"claim": ["b", "a", "a"], "claim_held": ["held", "not held", "not held"]}).to_csv(
        report / "tables" / "claims_ledger.csv", index=False)
    p = paper_report("aro", "ARO", report, tmp_path / "reports" / "index.html")
    assert p.link == "papers/aro/index.html" and dict(p.verdicts) == {"a": "not held", "b": "held"}


def test_runs_table_lists_expected_and_evaluated_models():
    t = runs_table(PARAMS, _long()).set_index("model")
    assert list(t.index) == ["clip-b0", "clip-b1", "negclip-b0s0", "negclip-b1s0"]
    assert t.loc["negclip-b1s0", "metrics"] == "missing" and t.loc["negclip-b1s0", "base seed"] == "1"
    assert t.loc["clip-b1", "run_record"] == "runs/evaluate_base@b1.json"
    assert t.loc["clip-b1", "fine-tune seed"] == "" and t.loc["negclip-b0s0", "fine-tune seed"] == "0"


def test_landing_page_has_papers_runs_matrix_and_mlflow(tmp_path):
    methods = methods_of(PARAMS)
    matrix = write_matrix(_long(), ["vg_relation"], tmp_path / "matrix", methods)
    page = landing_page([PaperReport("aro", "ARO title", "papers/aro/index.html", {"a": "held", "b": "not held"})],
                        PARAMS, _long(), methods, ["vg_relation"], matrix)
    assert page.startswith("<!doctype html>") and page.endswith("</html>\n")
    for text in ("<h2 id='papers'>Papers</h2>", "href='papers/aro/index.html'", "ARO title", "class='held'>held",
                 "<h2 id='ran'>What the pipeline ran</h2>", "Profile <code>toy</code>",
                 "<code>base_seeds</code>) <code>0, 1</code>",
                 "<td>CLIP</td>\n      <td><code>clip</code></td>\n      <td>2</td>\n      <td>2 base seeds (0, 1)</td>",
                 "<td>NegCLIP</td>\n      <td><code>negclip</code></td>\n      <td>1</td>",
                 "negclip-b1s0", "<h2>Every model on every benchmark</h2>", "data:image/png;base64,",
                 "<h2 id='records'>Run records and the MLflow UI</h2>", ui_url(), "make ui", "tags.dvc_stage",
                 "runs/&lt;dvc_stage&gt;.json", "sqlite:///mlflow.db"):
        assert text in page, text
    assert not NAN.search(page) and "Left out of every table" not in page
    stale = landing_page([], PARAMS, _long(), methods, ["vg_relation"], matrix, ignored=["negclip_old-b0s0"])
    assert "Left out of every table: <code>metrics/negclip_old-b0s0</code>" in stale

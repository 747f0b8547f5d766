"""Stage `report_index`: reports/index.html, the landing page: every paper's report with its claims-ledger verdicts,
what the pipeline ran (profile, chains, models), the cross-paper matrix (every evaluated model x the headline metric
of every benchmark of `evaluate.benchmarks`, mean ± sample std over whole-chain runs, and one row per blind-text
ceiling of params `blind`; tables and heatmap in reports/matrix/), in the toy profile which benchmark parts rest on words
the models never met in training (vlcomp.reporting.exposure: the world's training captions against the benchmark files;
reports/matrix/word_exposure*.csv), and where the run records and the MLflow UI are.
Also logs one MLflow summary run per method to the experiment `evaluate` (vlcomp.summary_runs: mean and spread over
the method's chains, beside the per-model runs)."""

from __future__ import annotations

from pathlib import Path

from _common import parser, run
from vlcomp.io import atomic_path


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--reports", required=True, help="the folder of the papers' reports (reports/papers/<paper>/)")
    p.add_argument("--metrics", required=True, help="the evaluation outputs (metrics/<model>/metrics.json)")
    p.add_argument("--matrix", required=True, help="output folder of the matrix tables and heatmap")
    p.add_argument("--world", help="the world folder (data/world): its training splits' captions (toy profile)")
    p.add_argument("--benchmarks", help="the benchmarks stage's output (data/benchmarks): the items' captions "
                                        "(toy profile)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if (args.world is None) != (args.benchmarks is None):
        p.error("--world and --benchmarks go together (the words of the benchmarks against the world's captions)")
    from vlcomp.config import load_params
    from vlcomp.eval.inputs import evaluation_benchmarks
    from vlcomp.reporting.blind import read_blind
    from vlcomp.reporting.collect import collect, ignored_models, methods_of
    from vlcomp.reporting.exposure import word_exposure, write_exposure
    from vlcomp.reporting.index_page import landing_page, paper_report
    from vlcomp.reporting.matrix import not_expressible, not_expressible_html, write_matrix
    from vlcomp.reporting.papers import papers_of
    from vlcomp.summary_runs import log_summaries

    params = load_params(args.params)
    papers = [paper_report(paper.name, paper.title, Path(args.reports) / paper.name, args.out)
              for paper in papers_of(params)]  # every paper of params, in its order
    benchmarks = evaluation_benchmarks(params)
    long, methods = collect(args.metrics, params), methods_of(params)
    matrix = write_matrix(long, benchmarks, args.matrix, methods, read_blind(args.metrics, params))
    left_out = not_expressible()
    left_out.to_csv(Path(args.matrix) / "not_expressible.csv", index=False)
    toy = params["profile"] == "toy"
    extra = not_expressible_html(left_out) if toy else ""
    if toy and args.world is not None:
        matrix += write_exposure(word_exposure(args.world, args.benchmarks, params), args.matrix)
    with atomic_path(args.out) as tmp:
        tmp.write_text(landing_page(papers, params, long, methods, benchmarks, matrix, extra,
                                     ignored_models(args.metrics, params)))
    log_summaries(long, profile=params["profile"], params=params)  # a view in MLflow; no stage reads it


if __name__ == "__main__":
    run(main)

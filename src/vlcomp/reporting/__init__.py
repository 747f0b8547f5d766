"""The papers' reports: reproduced numbers read from the DVC outputs, next to the papers' printed ones.

Shared by every paper: :mod:`.tree` (the one reader of the metrics tree, both profiles; a model's chain from its
provenance or params), :mod:`.collect` (the tree as a long table, statistics over whole-chain runs and the legends that
say what a spread is over, the methods a report shows), :mod:`.comparison` (long comparison tables against printed
values), :mod:`.printed_values` (printed numbers, transcribed once per paper) and its views :mod:`.paper_values`
and :mod:`.released_values`, :mod:`.ledger` (claims as conditions over whole chains), :mod:`.items` (metrics
recomputed from the per-item tables, the paired item bootstrap), :mod:`.render` (numeric CSVs, formatted tables
and figures with their legends), :mod:`.matrix` (every model x every benchmark), :mod:`.index_page`
(``reports/index.html``), :mod:`.notebook` (running ``notebooks/<paper>.py`` for a profile). Per paper:
:mod:`.papers` (the registry; one module or package per paper with its tables, figures and claims).
"""

"""The papers' reports: reproduced numbers read from the DVC outputs, next to the papers' printed ones.

Shared by every paper: :mod:`.tree` (the one reader of the metrics tree, both profiles), :mod:`.collect` (the
tree as a long table, statistics over seeds, the methods a report shows), :mod:`.comparison` (long comparison
tables against printed values), :mod:`.paper_values` and :mod:`.released_values` (printed numbers, transcribed),
:mod:`.ledger` (claims as conditions over seeds), :mod:`.render` (writing tables and figures), :mod:`.matrix`
(every model x every benchmark), :mod:`.notebook` (running ``notebooks/<paper>.py`` for a profile).
Per paper: :mod:`.papers` (the registry; one module or package per paper with its tables, figures and claims).
"""

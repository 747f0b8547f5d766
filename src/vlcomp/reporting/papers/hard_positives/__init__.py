"""The Hard Positive Truth about Vision-Language Compositionality (Kamath et al., ECCV 2024; catalog
``hard_positives.md``): the report's logic, to come.

For now the package holds :mod:`.printed` only (every printed number of Tables 1-10 and of Figures 1 and 3's score
tables, exact text and toy-unit values, and the catalog's derived numbers HP-N1..N4 and the REPLACE pooling
check). The paper is not registered yet (no ``PAPERS.add``): that comes with its methods, tables and claims.
"""

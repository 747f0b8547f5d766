"""Reporting helpers: paper-printed values and reproduced-vs-paper comparisons."""

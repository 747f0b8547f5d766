"""Benchmarks: builders of the toy twins, real-format loaders, and scorers, in one registry."""

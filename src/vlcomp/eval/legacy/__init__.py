"""The toy profile's first evaluation path (its own twins in ad hoc files, its own scorers), kept only for the
per-item decision parity test that guards the switch to the one engine (tests/eval/test_legacy_parity.py). It is
deleted once that switch has landed."""

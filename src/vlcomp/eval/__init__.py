"""The evaluation engine of both profiles: any benchmark task on any ``ImageTextScorer``.

- :mod:`.engine` - the task shapes (choice, retrieval, classification), batched scoring (each unique image
  and caption encoded once; cross scorers through batched ``score_pairs``) and the naive one-item-at-a-time
  reference loops;
- :mod:`.common` - helpers the benchmark records share (inputs, MLflow-safe key parts, checked tables);
- :mod:`.run` - one scorer on a list of benchmarks -> ``items/``, ``metrics.json``, ``provenance.json``.
"""

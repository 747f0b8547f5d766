"""The paper profile's stage logic: the same stages as the toy profile, on real weights and data.

- :mod:`.world` — stage ``world``: index the real caption files (COCO / Flickr30k Karpathy) and their images;
- :mod:`.pretrain` — stage ``pretrain``: resolve the pretrained base weights (OpenAI ViT-B/32) instead of training;
- :mod:`.evaluate` — stages ``evaluate_base``, ``evaluate@<variant>``, ``evaluate_released@<model>``: the
  papers' released-format runners (:mod:`vlcomp.benchmarks`) on a pipeline model or a released checkpoint.

The stage entry points in ``stages/`` switch here when ``profile: paper`` (``python -m vlcomp.profile paper``).
"""

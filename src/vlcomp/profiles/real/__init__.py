"""The real profile's stage logic: the same stages as the toy profile (:mod:`vlcomp.profiles.toy`, the same module
names and signatures), on real weights and data.

- :mod:`.world` — stage ``world``: index the real caption files (COCO / Flickr30k Karpathy) and their images;
- :mod:`.pretrain` — stage ``pretrain``: resolve the pretrained base weights (OpenAI ViT-B/32) instead of training;
- :mod:`.benchmarks` — stage ``benchmarks``: the released files of ``real_inputs``, checked;
- :mod:`.evaluate` — stages ``evaluate_base``, ``evaluate@<variant>``, ``evaluate_released@<model>``: the
  papers' released-format runners (:mod:`vlcomp.benchmarks`) on a pipeline model or a released checkpoint;
- :mod:`.zoo` — the released checkpoint families by name (``released_models``: OpenAI CLIP, NegCLIP, CE-CLIP,
  CoN-CLIP, TSVLC, BLIP, FLAVA).

The stage entry points in ``stages/`` switch here when ``profile: real`` (``python -m vlcomp.profiles real``).
"""

"""The toy profile's stage logic: a generated world, a tiny CLIP trained here, twins of every benchmark.

- :mod:`.world` — stage ``world``: generate the world's splits (:mod:`vlcomp.world`);
- :mod:`.pretrain` — stage ``pretrain``: train the tiny CLIP from scratch on the ``web`` split;
- :mod:`.benchmarks` — stage ``benchmarks``: build the twins of ``benchmarks.twins`` (:mod:`vlcomp.twins`) in the
  released formats;
- :mod:`.evaluate` — stages ``evaluate_base``, ``evaluate@<variant>``: a pipeline model as a scorer with the toy
  preprocessing.

The real profile's counterparts (:mod:`vlcomp.profiles.real`) have the same module names and signatures.
"""

"""The two profiles' own code: what only one profile's path through the pipeline imports.

- :mod:`.toy` — the toy profile's stage logic (generated world, tiny CLIP trained here);
- :mod:`.paper` — the real profile's stage logic (real caption files and images, released weights, the model
  zoo of released checkpoint families);
- :mod:`.switch` — ``python -m vlcomp.profiles [toy|real]``: resolve ``profiles/common.yaml`` + a profile's
  overlay into ``params.yaml``.

Shared code (everything else under ``vlcomp``) never imports a profile package; the stage scripts in
``stages/`` choose one by ``params["profile"]``. ``dvc.yaml`` therefore lists, for each stage, the shared code it
imports plus ``src/vlcomp/profiles/${profile}``: an edit to real-profile-only code leaves the toy pipeline up to date,
and the reverse (``tests/test_stage_deps.py`` checks both against the stage scripts' import graphs).
This package's own ``__init__`` stays free of code, since every profile import runs it.
"""

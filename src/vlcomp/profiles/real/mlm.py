"""Stage ``train_mlm`` (paper): the named pretrained masked LM, resolved offline and saved as the stage's output.

``mlm.model`` names a Hugging Face model in the local cache (or a folder): TSVLC's reference calls
``pipeline("fill-mask")`` with no model, whose default is ``distilroberta-base``. Nothing is downloaded
(``local_files_only``); a missing model is an error naming ``mlm.model``. Nothing is trained.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...config import expand_path, section


def masked_lm(params: dict, world: str | Path, *, on_log: Callable | None = None):
    """``(model, tokenizer, [], about)``: the pretrained masked LM ``mlm.model``; ``(None, None, [], about)`` when
    ``mlm.model`` is null (no generator of this profile reads one yet)."""
    name = section(params, "mlm.model")
    if name is None:
        return None, None, [], {"kind": "none", "model": None,
                                "why": "params mlm.model is null: no generator of the real profile reads a masked LM"}
    if not isinstance(name, str) or not name:
        raise ValueError(f"params: mlm.model={name!r} must name a masked LM (e.g. distilroberta-base)")
    from ...text.mlm import load_mlm

    model, tokenizer = load_mlm(expand_path(name, "mlm.model"))
    return model, tokenizer, [], {"kind": "pretrained", "model": name}

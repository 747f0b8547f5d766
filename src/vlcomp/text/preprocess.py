"""Caption cleaning exactly as ARO's (BLIP's) ``pre_caption``."""

from __future__ import annotations

import re

#: The characters ARO/BLIP replace with a space: ``. ! " ( ) * # : ; ~``. Commas, apostrophes, hyphens,
#: ``?`` and ``/`` are kept (the ALBEF variant that also drops ``,'?`` and splits ``-``/``/`` is a
#: different function and is not what ARO uses).
_PUNCT = re.compile(r"([.!\"()*#:;~])")
_MULTI_SPACE = re.compile(r"\s{2,}")


def pre_caption(caption: str, max_words: int = 30) -> str:
    """Lowercase, replace ``. ! " ( ) * # : ; ~`` with spaces, collapse whitespace, strip, keep ``max_words``.

    Step for step the ARO code (``dataset_zoo/retrieval.py``), including its quirks:

    - only runs of **two or more** whitespace characters become one space; a lone tab or newline
      between two words is kept as it is;
    - after the collapse, trailing newlines and then leading/trailing spaces (not tabs) are stripped;
    - words for the truncation are split on a single space ``" "``.

    ARO's function defaults to ``max_words=50`` but every ARO caller passes 30, so 30 is the default here.
    """
    if not isinstance(caption, str):
        raise ValueError(f"pre_caption expects a str caption, got {type(caption).__name__}: {caption!r}")
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
        raise ValueError(f"pre_caption: max_words must be a positive int, got {max_words!r}")
    caption = _PUNCT.sub(" ", caption.lower())
    caption = _MULTI_SPACE.sub(" ", caption)
    caption = caption.rstrip("\n").strip(" ")
    words = caption.split(" ")
    if len(words) > max_words:
        caption = " ".join(words[:max_words])
    return caption

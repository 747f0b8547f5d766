"""Parsed captions, saved once and read by every mining stage that parses the same split (``parse@<split>``).

spaCy parsing is the one part of NegCLIP mining that does not depend on the chain (base model or seed): 45,000
toy COCO captions take ~38 s, the same on every chain. The ``parse`` stage writes the parses as a spaCy
:class:`~spacy.tokens.DocBin` (tokens, tags, POS, dependencies, heads: everything :mod:`vlcomp.text` reads),
and a miner given them skips the parse. The parses are checked against the captions they stand for (same count,
same text, same pipeline), so a stale file fails with its path instead of mining the wrong captions.

Files: ``<out>/docs.spacy`` (the DocBin) and ``<out>/summary.json`` (split, number of captions, pipeline name and
version).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

DOCS_FILE = "docs.spacy"
SUMMARY_FILE = "summary.json"


def pipeline_id(nlp: Language) -> str:
    """``<lang>_<name>-<version>`` of a loaded pipeline (what a parse file records and is checked against)."""
    meta = nlp.meta
    return f"{meta.get('lang', '?')}_{meta.get('name', '?')}-{meta.get('version', '?')}"


def parse_captions(captions: Sequence[str], nlp: Language, *, batch_size: int = 256) -> list[Doc]:
    if "parser" not in nlp.pipe_names:
        raise ValueError(f"parse_captions: the spaCy pipeline {pipeline_id(nlp)!r} has no 'parser'")
    return list(nlp.pipe(captions, batch_size=batch_size))


def write_parses(out_dir: str | Path, docs: Sequence[Doc], nlp: Language, split: str) -> dict[str, Any]:
    """Write ``docs`` (in caption order) and their summary into ``out_dir``; returns the summary."""
    from spacy.tokens import DocBin

    from ..io import write_json

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    DocBin(store_user_data=False, docs=docs).to_disk(out / DOCS_FILE)
    summary = {"split": split, "n_captions": len(docs), "spacy_pipeline": pipeline_id(nlp)}
    write_json(out / SUMMARY_FILE, summary)
    return summary


def read_parses(parsed_dir: str | Path, nlp: Language, captions: Sequence[str]) -> list[Doc]:
    """The saved parses of ``captions`` (in order), checked: same pipeline, same number, same text each."""
    from spacy.tokens import DocBin

    from ..io import read_json

    folder = Path(parsed_dir)
    summary_path, docs_path = folder / SUMMARY_FILE, folder / DOCS_FILE
    for path in (summary_path, docs_path):
        if not path.is_file():
            raise FileNotFoundError(f"{path}: parsed captions not found (run the parse stage)")
    summary = read_json(summary_path)
    if summary.get("spacy_pipeline") != pipeline_id(nlp):
        raise ValueError(f"{summary_path}: parsed with {summary.get('spacy_pipeline')!r}, but the miner loads "
                         f"{pipeline_id(nlp)!r} (params nlp.spacy_model); rerun the parse stage")
    docs = list(DocBin().from_disk(docs_path).get_docs(nlp.vocab))
    if len(docs) != len(captions):
        raise ValueError(f"{docs_path}: {len(docs)} parsed captions, the split has {len(captions)}")
    for i, (d, c) in enumerate(zip(docs, captions, strict=True)):
        if d.text != c:
            raise ValueError(f"{docs_path}: caption {i} was parsed as {d.text!r:.80}, the split has {c!r:.80}")
    return docs

"""Benchmark inputs computed once by the ``benchmarks`` stage, in both profiles, instead of at every evaluation.

ARO's COCO/Flickr30k-Order options and Table 4's shuffled retrieval captions come from spaCy parses of the Karpathy
test captions. The stage parses each caption file once and writes:

- ``<out>/order/<name>/seed<s>.json`` (``coco_order``, ``flickr_order``): one entry per caption,
  ``{"image", "caption_options"}`` (option 0 the original, then ARO's four shuffles, all ``pre_caption``-ed);
  input ``<name>_options``;
- ``<out>/retrieval_shuffles/<name>/<strategy>/seed<s>.json`` (``coco_retrieval``, ``flickr_retrieval``): the
  ``pre_caption``-ed captions shuffled by each strategy of ARO Table 4; input ``<name>_shuffles``.

Randomness: Order seed ``s`` uses ``np_rng(seed, "benchmarks", "order", <coco|flickr>, s)``, a text shuffle
``np_rng(seed, "benchmarks", "retrieval", <coco|flickr>, strategy, s)`` (``seed`` = ``root_seed``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..formats.karpathy import load_karpathy
from ..io import write_json
from ..seeding import np_rng
from ..text.perturb import TextShuffler
from .aro import ORDER_SHORT, compute_order_options, order_options_records
from .retrieval import RETRIEVAL_SHORT, TEXT_STRATEGIES

#: benchmark -> (Karpathy file input key, what it materialises)
SOURCES = {"coco_order": "coco_karpathy_test", "flickr_order": "flickr_karpathy_test",
           "coco_retrieval": "coco_karpathy_test", "flickr_retrieval": "flickr_karpathy_test"}


def materialise(names: list[str], inputs: Mapping[str, Any], out: Path, *, order_seeds: int, shuffle_seeds: int,
                seed: int, shuffler: TextShuffler) -> dict[str, str]:
    """Write the computed inputs of every benchmark of ``names`` that has some; returns the new input entries
    (paths relative to ``out``). ``inputs`` hold absolute (or cwd-relative) paths."""
    added: dict[str, str] = {}
    parsed: dict[tuple[str, bool], tuple[list[dict], list]] = {}

    def captions(key: str, clean: bool) -> tuple[list[dict], list]:
        if (key, clean) not in parsed:
            records = load_karpathy(Path(inputs[key]), clean=clean)
            flat = [c for r in records for c in r["caption"]]
            parsed[(key, clean)] = (records, shuffler.tag(flat))
        return parsed[(key, clean)]

    for name in names:
        if name in ORDER_SHORT:
            records, tagged = captions(SOURCES[name], clean=False)
            options = compute_order_options(records, name, list(range(order_seeds)), shuffler=shuffler, base_seed=seed,
                                            tagged=tagged)
            folder = out / "order" / name
            for s, opts in options.items():
                write_json(folder / f"seed{s}.json", order_options_records(records, opts))
            added[f"{name}_options"] = folder.relative_to(out).as_posix()
        elif name in RETRIEVAL_SHORT and shuffle_seeds > 0:
            records, tagged = captions(SOURCES[name], clean=True)
            clean = [c for r in records for c in r["caption"]]
            folder = out / "retrieval_shuffles" / name
            for strategy in TEXT_STRATEGIES:
                for s in range(shuffle_seeds):
                    rng = np_rng(seed, "benchmarks", "retrieval", RETRIEVAL_SHORT[name], strategy, s)
                    texts = shuffler.perturb_batch(clean, [strategy], rng, tagged=tagged)[strategy]
                    write_json(folder / strategy / f"seed{s}.json", texts)
            added[f"{name}_shuffles"] = folder.relative_to(out).as_posix()
    return added

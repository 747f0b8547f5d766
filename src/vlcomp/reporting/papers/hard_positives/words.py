"""Tables 4-6 (HP-T4, T5, T6): the REPLACE set's fixed replacement map and each word's frequency.

The paper hand-wrote one replacement per word for the 10 most common words of each VL-CheckList type (14 relations,
23 listed attributes). The toy's map is :func:`vlcomp.twins.hardpos.hard_positive_map` of the world's
``world.captions.synonyms`` (read from params): a synonym of the world's table where one exists (sizes, *purple*,
three relations), the converse with the arguments swapped for the relations without one. Each word's frequency is
counted in the REPLACE twin's own files (``<benchmarks>/hardpos/{data,swapped_data}/vl_checklist_*.json``,
:func:`vlcomp.formats.hardpos.load_benchmark`): per item, the map entry that turns ``c`` into ``c_p``
(:func:`rule_of`; an item no entry explains is counted as *unexplained*, never guessed). The paper's own tables are
shown beside, as printed (:mod:`.printed`, with the example captions of the catalog, :data:`PRINTED_EXAMPLES`),
and the parts of the paper the world cannot express (:data:`vlcomp.twins.hardpos.NOT_EXPRESSIBLE`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from . import printed as P

#: Tables 4-6's example captions (catalog §4: O / HP / HN, one randomly sampled example per word), by the printed
#: row name.
PRINTED_EXAMPLES: dict[str, dict[str, tuple[str, str, str]]] = {
    "HP-T4": {
        "in": ("white horse in field", "white horse within field", "white horse out of field"),
        "behind": ("van behind truck", "van to the rear of truck", "van in front of truck"),
        "on top of": ("dishes on top of table", "dishes on table", "dishes below table"),
        "near": ("deck near water", "deck next to water", "deck far from water"),
        "next to": ("person next to train", "person near train", "person far from train"),
        "under": ("street under animals", "street beneath animals", "street above animals"),
        "by": ("road by building", "road near building", "road far from building"),
        "above": ("cloud above hill", "cloud on top of hill", "cloud below hill"),
        "wearing, wears": ("man wearing shirt", "man in shirt", "man hugging shirt"),
        "holding": ("woman holding fork", "woman grasping fork", "woman helping fork"),
        "sitting": ("cow sitting next to man", "cow seated next to man", "cow chasing man"),
        "hanging": ("banner hanging from building", "banner dangling from building", "banner driving building"),
        "walking": ("man walking on beach", "man strolling on beach", "man enclosing beach"),
        "riding on": ("person riding motorcycle", "person traveling on motorcycle", "person herding motorcycle"),
    },
    "HP-T5": {
        "standing": ("turned head of a standing person", "turned head of a upright person",
                     "turned head of a sitting person"),
        "sitting": ("sitting man", "seated man", "crouching man"),
        "walking": ("foot of walking man", "foot of strolling man", "foot of lying man"),
        "eating": ("eating woman", "ingesting woman", "driving woman"),
        "hanging": ("hanging branch", "dangling branch", "looking up branch"),
        "looking": ("looking elephant", "gazing elephant", "playing elephant"),
        "white": ("white toilet", "ivory toilet", "orange toilet"),
        "black": ("black socks", "ebony socks", "dark brown socks"),
        "blue": ("lady wearing blue shirt", "lady wearing sapphire shirt", "lady wearing yellow shirt"),
        "brown": ("edge of brown beach", "edge of chestnut beach", "edge of purple beach"),
        "red": ("red glove", "crimson glove", "blue glove"),
        "green": ("cooler has green lid", "cooler has emerald lid", "cooler has dark blue lid"),
        "silver": ("silver fork", "metallic fork", "light brown fork"),
    },
    "HP-T6": {
        "large": ("tire on large truck", "tire on big truck", "tire on tiny truck"),
        "small": ("toilet inside small bathroom", "toilet inside tiny bathroom", "toilet inside huge bathroom"),
        "long": ("person carrying a long skateboard", "person carrying a lengthy skateboard",
                 "person carrying a short skateboard"),
        "big": ("big elephant", "large elephant", "tiny elephant"),
        "huge": ("kites under huge sky", "kites under big sky", "kites under tiny sky"),
        "wet": ("wet road", "damp road", "cloudless road"),
        "smiling": ("snowboard with smiling man", "snowboard with happy man", "snowboard with sad man"),
        "old": ("old train", "aged train", "young train"),
        "clear": ("clear sky", "unclouded sky", "partly cloudy sky"),
        "young": ("shoes on young man", "shoes on youthful man", "shoes on unhappy man"),
    },
}

#: The toy word types of each table: Table 4 relations, Table 5 colours (its actions: not expressible), Table 6 sizes
#: (its states: not expressible).
TABLE_TYPES: dict[str, tuple[str, ...]] = {"HP-T4": ("relation",), "HP-T5": ("colour",), "HP-T6": ("size",)}
#: The :data:`vlcomp.twins.hardpos.NOT_EXPRESSIBLE` entries each table concerns.
TABLE_NOT_EXPRESSIBLE: dict[str, tuple[str, ...]] = {
    "HP-T4": ("replace_rel/pointing at", "replace_rel/near", "replace_rel/synonyms"),
    "HP-T5": ("replace_att/colour", "replace_att/action"),
    "HP-T6": ("replace_att/state", "replace_att/material"),
}
UNEXPLAINED = "unexplained"
SYNONYM, CONVERSE = "synonym", "converse (arguments swapped)"
COLUMNS = ("artifact", "part", "type", "word", "replacement", "rule", "group", "toy frequency", "share of part",
           "O (toy)", "HP (toy)", "HN (toy)")


def toy_map(params: Mapping) -> dict[str, dict[str, str]]:
    """The world's fixed hard-positive map (``world.captions.synonyms`` of params, default ``base``)."""
    from ....twins.hardpos import hard_positive_map

    synonyms = (((params.get("world") or {}).get("captions") or {}).get("synonyms")) or "base"
    return hard_positive_map(str(synonyms))


def synonyms_setting(params: Mapping) -> str:
    return str((((params.get("world") or {}).get("captions") or {}).get("synonyms")) or "base")


def rule_of(caption: str, positive: str, hp_map: Mapping[str, Mapping[str, str]], part: str
            ) -> tuple[str, str, str]:
    """(word, replacement, rule) of one REPLACE item: the map entry that turns ``caption`` into ``positive``, or
    (:data:`UNEXPLAINED`, "", "") when none does. Attributes: the one word that differs, if it is an entry of
    ``attributes``; relations: a ``relation_synonyms`` entry with the same arguments, else a ``relations``
    (converse) entry with the arguments swapped."""
    if part == "replace_att":
        a, b = caption.split(), positive.split()
        diff = [(x, y) for x, y in zip(a, b, strict=False) if x != y] if len(a) == len(b) else []
        if len(diff) == 1 and hp_map.get("attributes", {}).get(diff[0][0]) == diff[0][1]:
            return diff[0][0], diff[0][1], SYNONYM
        return UNEXPLAINED, "", ""
    padded = f" {caption} "
    for word, syn in sorted(hp_map.get("relation_synonyms", {}).items(), key=lambda kv: -len(kv[0])):
        if f" {word} " in padded and padded.replace(f" {word} ", f" {syn} ", 1).strip() == positive:
            return word, syn, SYNONYM
    for rel, conv in sorted(hp_map.get("relations", {}).items(), key=lambda kv: -len(kv[0])):
        if f" {rel} " in padded:
            subj, obj = padded.split(f" {rel} ", 1)
            if f"{obj.strip()} {conv} {subj.strip()}" == positive:
                return rel, conv, CONVERSE
    return UNEXPLAINED, "", ""


def word_type(word: str, part: str) -> str:
    from ....world.concepts import COLOURS, SIZES

    if part == "replace_rel":
        return "relation"
    return "size" if word in SIZES else "colour" if word in COLOURS else "attribute"


def frequencies(root: str | Path, hp_map: Mapping[str, Mapping[str, str]]) -> pd.DataFrame:
    """Per REPLACE part and map entry met in the twin's files: its count, share of the part and the first item's
    captions (O = c, HP = c_p, HN = c_n); then the entries of the map no item uses (count 0) and the unexplained
    items. Raises FileNotFoundError when the twin's files are missing."""
    from ....formats.hardpos import load_benchmark
    from ....world.concepts import ALL_RELATIONS

    rows = []
    for part in ("replace_rel", "replace_att"):
        cases = load_benchmark(root, part)
        counts: Counter = Counter()
        first: dict[tuple[str, str, str], tuple[str, str, str]] = {}
        for c in cases:
            k = rule_of(c.caption, c.positive, hp_map, part)
            counts[k] += 1
            first.setdefault(k, (c.caption, c.positive, c.negative))
        entries = ([(w, s, SYNONYM) for w, s in hp_map.get("attributes", {}).items()] if part == "replace_att" else
                   [(w, s, SYNONYM) for w, s in hp_map.get("relation_synonyms", {}).items()]
                   + [(w, s, CONVERSE) for w, s in hp_map.get("relations", {}).items()])
        for k in [*entries, *[k for k in counts if k not in entries]]:
            word, repl, rule = k
            ex = first.get(k, ("", "", ""))
            group = ALL_RELATIONS[word].group if part == "replace_rel" and word in ALL_RELATIONS else ""
            rows.append({"part": part, "type": word_type(word, part) if word != UNEXPLAINED else UNEXPLAINED,
                         "word": word, "replacement": repl, "rule": rule, "group": group,
                         "toy frequency": counts.get(k, 0), "share of part": counts.get(k, 0) / max(1, len(cases)),
                         "O (toy)": ex[0], "HP (toy)": ex[1], "HN (toy)": ex[2]})
    df = pd.DataFrame(rows)
    return df[df["toy frequency"].gt(0) | df["word"].ne(UNEXPLAINED)].reset_index(drop=True)


def toy_word_table(freq: pd.DataFrame, artifact: str) -> pd.DataFrame:
    """The toy's rows of one of Tables 4-6 (its word types), most frequent first, with a total row."""
    sub = freq[freq["type"].isin([*TABLE_TYPES[artifact], UNEXPLAINED])]
    if artifact == "HP-T4":
        sub = sub[sub["part"] == "replace_rel"]
    else:
        sub = sub[sub["part"] == "replace_att"]
    sub = sub.sort_values(["toy frequency", "word"], ascending=[False, True], kind="stable")
    used = int((sub["toy frequency"] > 0).sum())
    total = {"part": sub["part"].iloc[0] if len(sub) else "", "type": "total",
             "word": f"{used} of {len(sub)} entries met",
             "replacement": "", "rule": "", "group": "", "toy frequency": int(sub["toy frequency"].sum()),
             "share of part": float(sub["share of part"].sum()), "O (toy)": "", "HP (toy)": "", "HN (toy)": ""}
    out = pd.concat([sub, pd.DataFrame([total])], ignore_index=True)
    return out.assign(artifact=artifact)[list(COLUMNS)]


def printed_word_table(artifact: str) -> pd.DataFrame:
    """One of Tables 4-6 as printed: word, replacement, frequency, and the example captions (O / HP / HN)."""
    examples = PRINTED_EXAMPLES[artifact]
    rows = []
    for r in P.rows_of(artifact):
        o, hp, hn = examples[r.name]
        rows.append({"artifact": artifact, "word (paper)": r.name, "replacement (paper)": r.replacement,
                     "frequency (paper)": r.cells["n"].text, "O": o, "HP": hp, "HN": hn})
    return pd.DataFrame(rows)


def not_expressible(artifact: str | None = None) -> pd.DataFrame:
    """The parts of the paper the toy world cannot express (all, or those about ``artifact``)."""
    from ....twins.hardpos import NOT_EXPRESSIBLE

    wanted = None if artifact is None else set(TABLE_NOT_EXPRESSIBLE[artifact])
    return pd.DataFrame([{"part": p, "why not": why} for p, why in NOT_EXPRESSIBLE if wanted is None or p in wanted],
                        columns=["part", "why not"])

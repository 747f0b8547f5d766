"""Tiny fixtures of every benchmark in its released format, with a score table and the metrics it implies.

``build(name, root)`` writes one benchmark's files under ``root`` and returns a :class:`Fixture`: the inputs
mapping its runner reads, the ``(image id, caption) -> score`` table for :class:`~.helpers.LookupScorer`, and
metric values computed by hand (comments show the arithmetic). Image ids are disjoint between benchmarks, so
all fixtures can be merged into one run. Captions not in any table (the Order shuffles) score 0.3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .helpers import LookupCrossScorer, LookupScorer, write_image, write_json

UNKNOWN_CAPTION_SCORE = 0.3


@dataclass
class Fixture:
    inputs: dict[str, Any]
    table: dict[tuple[int, str], float]
    expected: dict[str, float]
    known: set[str] = field(default_factory=set)  # captions scored 0 where the table has no entry

    def scorer(self, cross: bool = False):
        """A LookupScorer (or a LookupCrossScorer with the same table) giving back ``table``."""
        default = default_score(self.known | {t for _, t in self.table})
        if cross:
            return LookupCrossScorer(self.table, self.table, default=default)
        return LookupScorer(self.table, default=default)


def _vgr(image, box, relation, true, false):
    x, y, w, h = box
    return {"image_path": image, "bbox_x": x, "bbox_y": y, "bbox_w": w, "bbox_h": h, "true_caption": true,
            "false_caption": false, "relation_name": relation}


def _aro_images(root: Path) -> Path:
    images = root / "aro" / "images"
    write_image(images / "vg1.jpg", ids=(1, 2))  # left half id 1, right half id 2
    write_image(images / "vg2.jpg", ids=(3,))
    write_image(images / "vg3.jpg", ids=(4,))
    write_image(images / "vg4.jpg", ids=(14, 15))
    return images


def vg_relation(root: Path) -> Fixture:
    images = _aro_images(root)
    cat_mat, mat_cat = "the cat is on the mat", "the mat is on the cat"
    cases = [
        _vgr("vg1.jpg", (0, 0, 10, 10), "on", cat_mat, mat_cat),  # id 1: 0.6 > 0.2 right
        _vgr("vg1.jpg", (0, 0, 10, 10), "on", "the cup is on the table", "the table is on the cup"),  # 0.1 < 0.5
        _vgr("vg1.jpg", (22, 0, 10, 10), "on", cat_mat, mat_cat),  # id 2: 0.7 > 0.3 right (captions repeat)
        _vgr("vg2.jpg", (0, 0, 30, 15), "behind", "the dog is behind the car", "the car is behind the dog"),
        _vgr("vg2.jpg", (5, 5, 10, 10), "wearing", "the man is wearing the hat", "the hat is wearing the man"),
        _vgr("vg1.jpg", (0, 0, 10, 10), "near", "the cat is near the dog", "the dog is near the cat"),  # excluded
    ]
    table = {(1, cat_mat): 0.6, (1, mat_cat): 0.2, (1, "the cup is on the table"): 0.1,
             (1, "the table is on the cup"): 0.5, (2, cat_mat): 0.7, (2, mat_cat): 0.3,
             (3, "the dog is behind the car"): 0.4, (3, "the car is behind the dog"): 0.1,
             (3, "the man is wearing the hat"): 0.3, (3, "the hat is wearing the man"): 0.3,  # tie: wrong
             (1, "the cat is near the dog"): 0.0, (1, "the dog is near the cat"): 0.4}
    excl = root / "aro" / "symmetric_relations.txt"
    excl.write_text("# ARO notebook list (excerpt)\nnear\nnext to  # symmetric\n")
    inputs = {"aro_vg_relation": str(write_json(root / "aro" / "visual_genome_relation.json", cases)),
              "aro_images": str(images), "aro_relation_exclusions": str(excl)}
    p = "aro/vg_relation"
    expected = {f"{p}/macro_acc": (2 / 3 + 1 + 0) / 3, f"{p}/micro_acc": 3 / 5, f"{p}/spatial_macro_acc": (2 / 3 + 1) / 2,
                f"{p}/verbs_macro_acc": 0.0, f"{p}/n_relations": 3, f"{p}/n_cases": 5, f"{p}/n_excluded_cases": 1,
                f"{p}/tie_rate": 1 / 5, f"{p}/rel/on/acc": 2 / 3, f"{p}/rel/behind/acc": 1.0}
    return Fixture(inputs, table, expected)


def vg_attribution(root: Path) -> Fixture:
    images = _aro_images(root)
    t, f = "the white road and the paved house", "the paved road and the white house"
    rec = {"image_path": "vg3.jpg", "bbox_x": 0, "bbox_y": 0, "bbox_w": 20, "bbox_h": 10}
    cases = [{**rec, "true_caption": t, "false_caption": f, "attributes": ["white", "paved"]}] * 25
    cases += [{**rec, "true_caption": "the red car and the blue door", "false_caption": "the blue car and the red door",
               "attributes": ["red", "blue"]},
              {**rec, "true_caption": "the red cup and the blue box", "false_caption": "the blue cup and the red box",
               "attributes": ["red", "blue"]}]
    table = {(4, t): 0.5, (4, f): 0.2, (4, "the red car and the blue door"): 0.5,
             (4, "the blue car and the red door"): 0.1, (4, "the red cup and the blue box"): 0.1,
             (4, "the blue cup and the red box"): 0.3}
    inputs = {"aro_vg_attribution": str(write_json(root / "aro" / "visual_genome_attribution.json", cases)),
              "aro_images": str(images)}
    p = "aro/vg_attribution"
    # white_paved: 25/25; red_blue (2 cases, under the 25-case floor): 1/2 -> macro over white_paved only
    expected = {f"{p}/macro_acc": 1.0, f"{p}/micro_acc": 26 / 27, f"{p}/n_pairs": 1, f"{p}/n_cases": 27,
                f"{p}/tie_rate": 0.0}
    return Fixture(inputs, table, expected)


KARPATHY = [{"image": "val2014/COCO_val2014_000000000010.jpg", "caption": ["A dog runs on the beach.", "a DOG running  "]},
            {"image": "val2014/COCO_val2014_000000000011.jpg", "caption": ["Two cats sleep on a red sofa.",
                                                                           "A pair of cats (sleeping)"]},
            {"image": "val2014/COCO_val2014_000000000012.jpg", "caption": ["A man rides a horse!",
                                                                           "a person riding a brown horse"]}]
#: The captions after BLIP's pre_caption, in file order (what the model sees).
CLEAN = ["a dog runs on the beach", "a dog running", "two cats sleep on a red sofa", "a pair of cats sleeping",
         "a man rides a horse", "a person riding a brown horse"]


def _coco(root: Path) -> dict[str, str]:
    images = root / "coco" / "images"
    for i, r in enumerate(KARPATHY):
        write_image(images / r["image"], ids=(10 + i,))
    return {"coco_karpathy_test": str(write_json(root / "coco" / "coco_karpathy_test.json", KARPATHY)),
            "coco_images": str(images)}


# image 10: best GT c0 0.5 is beaten by c2 0.6 -> rank 1; image 11: c3 0.8 on top -> rank 0;
# image 12: c1, c4, c5 all 0.4 -> the lower index c1 ranks first, GT rank 1.
RETRIEVAL_TABLE = {(10, CLEAN[0]): 0.5, (10, CLEAN[1]): 0.1, (10, CLEAN[2]): 0.6, (11, CLEAN[2]): 0.7,
                   (11, CLEAN[3]): 0.8, (12, CLEAN[4]): 0.4, (12, CLEAN[5]): 0.4, (12, CLEAN[1]): 0.4}


def coco_retrieval(root: Path) -> Fixture:
    p = "retrieval/coco"
    # t2i: c1's column is 0.1 (image 10) vs 0.4 (image 12) -> miss; every other caption's image is on top
    expected = {f"{p}/i2t/recall_at_1": 1 / 3, f"{p}/i2t/recall_at_5": 1.0, f"{p}/i2t/recall_at_10": 1.0,
                f"{p}/t2i/recall_at_1": 5 / 6, f"{p}/t2i/recall_at_5": 1.0, f"{p}/t2i/recall_at_10": 1.0}
    return Fixture(_coco(root), dict(RETRIEVAL_TABLE), expected, set(CLEAN))


def coco_order(root: Path) -> Fixture:
    inputs = {**_coco(root), "order_seeds": [0, 3]}
    # Originals score as above; every shuffled option scores 0.3 (or ties the original when unchanged). Only
    # c1 ("a dog running", 0.1 with image 10) loses: 5/6 per seed.
    p = "aro/coco_order"
    return Fixture(inputs, dict(RETRIEVAL_TABLE), {f"{p}/acc": 5 / 6, f"{p}/acc_std": 0.0, f"{p}/n_seeds": 2,
                                                   f"{p}/n_cases": 6}, set(CLEAN))


def sugarcrepe(root: Path) -> Fixture:
    d, images = root / "sugarcrepe" / "data", root / "coco" / "val2017"
    write_image(images / "000000000001.jpg", ids=(7,))
    write_image(images / "000000000002.jpg", ids=(8,))

    def case(fn, pos, neg):
        return {"filename": fn, "caption": pos, "negative_caption": neg}

    write_json(d / "replace_obj.json", {"0": case("000000000001.jpg", "A dog on a sofa. ", "A cat on a sofa."),
                                        "2": case("000000000002.jpg", "A red bus.", "A red car.")})
    write_json(d / "replace_att.json", {"5": case("000000000001.jpg", "A brown dog.", "A white dog.")})
    write_json(d / "replace_rel.json", {"1": case("000000000002.jpg", "A bus on a road.", "A bus under a road.")})
    write_json(d / "swap_obj.json", {"3": case("000000000002.jpg", "A bus near a car.", "A car near a bus.")})
    table = {(7, "A dog on a sofa. "): 0.6, (7, "A cat on a sofa."): 0.2, (8, "A red bus."): 0.5, (8, "A red car."): 0.4,
             (7, "A brown dog."): 0.3, (7, "A white dog."): 0.3,  # tie: wrong
             (8, "A bus on a road."): 0.2, (8, "A bus under a road."): 0.1,
             (8, "A bus near a car."): 0.1, (8, "A car near a bus."): 0.2,
             # the wrong-image control: with two images, each item is scored on the other one (a derangement of 2);
             # pairs not listed score 0 vs 0, a tie, so wrong
             (8, "A dog on a sofa. "): 0.4, (8, "A cat on a sofa."): 0.1,  # replace_obj "0" on image 8: right
             (7, "A red bus."): 0.1, (7, "A red car."): 0.2,  # replace_obj "2" on image 7: wrong
             (7, "A bus on a road."): 0.3, (7, "A bus under a road."): 0.1}  # replace_rel "1" on image 7: right
    inputs = {"sugarcrepe_dir": str(d), "coco_val2017_images": str(images),
              "sugarcrepe_categories": ["replace_obj", "replace_att", "replace_rel", "swap_obj"]}
    p = "sugarcrepe"
    # replace: 2/2, 0/1, 1/1 -> micro 3/4, macro (1 + 0 + 1) / 3; swap has no swap_att: no group keys
    expected = {f"{p}/replace_obj/acc": 1.0, f"{p}/replace_att/acc": 0.0, f"{p}/replace_rel/acc": 1.0,
                f"{p}/swap_obj/acc": 0.0, f"{p}/replace/micro_acc": 3 / 4, f"{p}/replace/macro_acc": 2 / 3,
                f"{p}/replace_obj/n": 2, f"{p}/replace_obj/wrong_image_acc": 1 / 2,
                f"{p}/replace_att/wrong_image_acc": 0.0, f"{p}/replace_rel/wrong_image_acc": 1.0,
                f"{p}/swap_obj/wrong_image_acc": 0.0}
    return Fixture(inputs, table, expected)


VALSE_RIGHT = {"existence": True, "plurals": True, "counting-hard": True, "counting-small-quant": False,
               "counting-adversarial": False, "relations": False, "action-replacement": True, "actant-swap": False,
               "coreference-standard": True, "coreference-hard": False, "foil-it": True}
_VALSE_ROOT_ID = {"visual7w": 20, "coco_val2017": 21, "swig": 22, "coco_train2014": 23, "visdial_val2018": 24,
                  "coco_val2014": 25}


def valse(root: Path) -> Fixture:
    from vlcomp.formats.valse import IMAGE_SOURCE

    d, roots = root / "valse" / "data", {k: str(root / "valse" / k) for k in _VALSE_ROOT_ID}
    for k, i in _VALSE_ROOT_ID.items():
        write_image(Path(roots[k]) / "img.jpg", ids=(i,))
    write_image(Path(roots["coco_val2014"]) / "COCO_val2014_000000000001.jpg", ids=(25,))
    table = {}
    for ins, right in VALSE_RIGHT.items():
        image = "COCO_val2014_000000000001.jpg" if ins == "foil-it" else "img.jpg"
        iid = _VALSE_ROOT_ID[IMAGE_SOURCE[ins]]
        rec = {"dataset": "x", "image_file": image, "caption": f"{ins} caption", "foil": f"{ins} foil",
               "mturk": {"caption": 3, "foil": 0, "other": 0}, "classes": None}
        data = {f"{ins}_0": rec}
        if ins == "existence":  # not validated (1 of 3 votes): left out, whatever it scores
            data["existence_1"] = {**rec, "caption": "unvalidated caption", "mturk": {"caption": 1, "foil": 2, "other": 0}}
        write_json(d / f"{ins}.json", data)
        table[(iid, f"{ins} caption")], table[(iid, f"{ins} foil")] = (0.5, 0.1) if right else (0.1, 0.5)
    # 6 of 11 instruments right; columns: counting = 1/3, others 1,1,0,1,0,1,0,1 -> (5 + 1/3) / 9
    expected = {"valse/avg_instruments": 6 / 11, "valse/avg_columns": (5 + 1 / 3) / 9, "valse/existence/acc": 1.0,
                "valse/column/counting/acc": 1 / 3, "valse/counting-hard/acc": 1.0, "valse/existence/n": 1}
    return Fixture({"valse_dir": str(d), "valse_images": roots}, table, expected)


def vlchecklist(root: Path) -> Fixture:
    d, vg, vaw = root / "vlc" / "data", root / "vlc" / "vg", root / "vlc" / "vaw"
    write_image(vg / "VG_100K" / "1.jpg", ids=(30,))
    write_image(vg / "VG_100K" / "2.jpg", ids=(31,))
    write_image(vaw / "VG_100K" / "3.jpg", ids=(32,))

    def item(image, pos, neg):
        return [image, {"POS": [pos, "unused"], "NEG": [neg]}]

    color_vg = [item("VG_100K/missing.jpg", "a red car", "a blue car"),  # image missing: dropped by the protocol
                item("VG_100K/1.jpg", "a red car", "a blue car"), item("VG_100K/2.jpg", "a green tree", "a pink tree"),
                item("VG_100K/1.jpg", "a black car", " a white car")]  # 0.2 vs 0.2: a tie is wrong
    color_vaw = [item("VG_100K/3.jpg", "a brown dog", "a grey dog"), item("VG_100K/3.jpg", "a tan dog", "a red dog")]
    spatial = [item("VG_100K/2.jpg", "tree behind car", "tree in front of car")]
    files = {"Attribute_color_vg": {"annotations": str(write_json(d / "Attribute/vg/color.json", color_vg)), "images": str(vg)},
             "Attribute_color_vaw": {"annotations": str(write_json(d / "Attribute/vaw/color.json", color_vaw)),
                                     "images": str(vaw)},
             "Relation_spatial_vg": {"annotations": str(write_json(d / "Relation/vg/spatial.json", spatial)),
                                     "images": str(vg)}}
    table = {(30, "a red car"): 0.5, (30, "a blue car"): 0.1, (31, "a green tree"): 0.4, (31, "a pink tree"): 0.2,
             (30, "a black car"): 0.2, (30, " a white car"): 0.2, (32, "a brown dog"): 0.6, (32, "a grey dog"): 0.1,
             (32, "a tan dog"): 0.1, (32, "a red dog"): 0.3, (31, "tree behind car"): 0.3,
             (31, "tree in front of car"): 0.1}
    # color/vg 2/3 -> 0.6667 (4 decimals), color/vaw 1/2; color = mean of the two datasets
    expected = {"vlchecklist/file/Attribute_color_vg/acc": 0.6667, "vlchecklist/file/Attribute_color_vaw/acc": 0.5,
                "vlchecklist/attribute/color": (0.6667 + 0.5) / 2, "vlchecklist/relation/spatial": 1.0}
    return Fixture({"vlchecklist_files": files}, table, expected)


def ccneg(root: Path) -> Fixture:
    images = root / "ccneg" / "images"
    negs = ["A cat, not on a bed", "A dog on a sofa", "A dog, not on a sofa", "A man without a hat",
            "No cars on the road", "A bowl with no chopsticks"]
    paths = [f"/workspace/datasets/cc3m/sub/{i}.jpg" for i in range(6)]
    for i in range(6):
        write_image(images / "sub" / f"{i}.jpg", ids=(40 + i,))
    data = {"image_paths": paths,
            "annotations": [{"json": {"caption": f"caption {i}"}, "sop_data": {"negative-prompt": n}}
                            for i, n in enumerate(negs)],
            "num_ops": {1: [0, 2, 4], 2: [1, 3]}}
    path = root / "ccneg" / "ccneg_preprocessed.pt"
    torch.save(data, path)
    # eval split = last 4 records (2..5); the model sees the negation without commas
    table = {(42, "caption 2"): 0.5, (42, "A dog not on a sofa"): 0.1,  # right
             (43, "caption 3"): 0.3, (43, "A man without a hat"): 0.3,  # tie: wrong (paper), right (code)
             (44, "caption 4"): 0.1, (44, "No cars on the road"): 0.4,  # wrong
             (45, "caption 5"): 0.6, (45, "A bowl with no chopsticks"): 0.2}  # right
    expected = {"ccneg/acc": 0.5, "ccneg/acc_code_tie_rule": 0.75, "ccneg/n": 4, "ccneg/k/1/acc": 0.5,
                "ccneg/k/1/n": 2, "ccneg/k/2/acc": 0.0, "ccneg/word/not/acc": 1.0, "ccneg/word/without/acc": 0.0,
                "ccneg/word/no/acc": 1.0, "ccneg/word/not/k/1/acc": 1.0}
    inputs = {"ccneg_annotations": str(path), "ccneg_images": str(images), "ccneg_n_eval": 4}
    return Fixture(inputs, table, expected)


def replace(root: Path) -> Fixture:
    hp = root / "hard_positives"
    write_image(hp / "data/VG_100K/2401814.jpg", ids=(9,))
    write_image(hp / "data/VG_100K/2347085.jpg", ids=(13,))

    def rows(image_id, items):
        return [{"image_id": image_id, "true_caption": t, "false_caption": f,
                 "image_path": f"data/VG_100K/{image_id}.jpg"} for t, f in items]

    att = [("white dog", "black dog", "ivory dog"), ("red car", "blue car", "crimson car")]
    rel = [("cat in box", "cat on box", "cat within box"), ("man wearing hat", "man holding hat", "man in hat")]
    for name, image, items in (("vl_checklist_attributes.json", "2401814", att),
                               ("vl_checklist_relations.json", "2347085", rel)):
        write_json(hp / "data" / name, rows(image, [(c, n) for c, n, _ in items]))
        write_json(hp / "swapped_data" / name, rows(image, [(p, n) for _, n, p in items]))
    table = {(9, "white dog"): 0.6, (9, "black dog"): 0.3, (9, "ivory dog"): 0.5,  # orig, aug
             (9, "red car"): 0.5, (9, "blue car"): 0.4, (9, "crimson car"): 0.2,  # orig, brittle (c > n > p)
             (13, "cat in box"): 0.2, (13, "cat on box"): 0.4, (13, "cat within box"): 0.5,  # brittle (p > n > c)
             (13, "man wearing hat"): 0.7, (13, "man holding hat"): 0.1, (13, "man in hat"): 0.6}  # orig, aug
    p = "hardpos"
    expected = {f"{p}/replace_att/orig": 1.0, f"{p}/replace_att/aug": 0.5, f"{p}/replace_att/brittleness": 0.5,
                f"{p}/replace_rel/orig": 0.5, f"{p}/replace_rel/aug": 0.5, f"{p}/replace_rel/brittleness": 0.5,
                f"{p}/replace/orig": 0.75, f"{p}/replace/aug": 0.5, f"{p}/replace/brittleness": 0.5,
                f"{p}/replace/delta": -0.25, f"{p}/replace/n": 4}
    return Fixture({"hard_positives_dir": str(hp)}, table, expected)


def swap(root: Path) -> Fixture:
    hp, images = root / "hard_positives", _aro_images(root)
    rec = {"image_path": "vg4.jpg", "bbox_y": 0, "bbox_w": 10, "bbox_h": 10}
    items = [("the white road and the paved house", "the paved road and the white house",
              "the paved house and the white road", 0), ("the red car and the blue door", "the blue car and the red door",
                                                         "the blue door and the red car", 25)]
    for folder, pick in (("data", 0), ("swapped_data", 2)):  # data/: (c, c_n); swapped_data/: (c_p, c_n)
        write_json(hp / folder / "visual_genome_attribution.json",
                   [{**rec, "bbox_x": x, "true_caption": it[pick], "false_caption": it[1], "attributes": ["a", "b"]}
                    for *it, x in items])
    table = {(14, items[0][0]): 0.5, (14, items[0][1]): 0.2, (14, items[0][2]): 0.4,  # orig, aug
             (15, items[1][0]): 0.3, (15, items[1][1]): 0.3, (15, items[1][2]): 0.1}  # tie: fails everything
    p = "hardpos/swap"
    expected = {f"{p}/orig": 0.5, f"{p}/aug": 0.5, f"{p}/brittleness": 0.0, f"{p}/delta": 0.0, f"{p}/n": 2}
    return Fixture({"hard_positives_dir": str(hp), "aro_images": str(images)}, table, expected)


def crepe_negate(root: Path) -> Fixture:
    from vlcomp.formats.crepe import negate_file, write_crepe_csv

    images, prod = root / "crepe" / "VG_100K", root / "crepe" / "prod_hard_negatives"
    for i in (30, 31, 32):
        write_image(images / f"{i}.jpg", ids=(i,))

    def row(image, caption, negs):
        return {"image_id": image, "x": 2, "y": 1, "width": 20, "height": 10, "caption": caption, "hard_negs": negs}

    negs_a = ["a dog not on a mat", "there is no dog", "a mat not under a dog", "no mat", "a dog on no mat"]
    negs_b = ["a cat not near a box", "there is no cat", "no box", "a cat near no box", "a box not near a cat"]
    negs_c = ["a bird not in a tree", "there is no bird", "no tree", "a bird in no tree", "a tree not around a bird"]
    write_crepe_csv(negate_file(prod, 4), [row(30, "a dog on a mat", negs_a), row(31, "a cat near a box", negs_b)], 4)
    write_crepe_csv(negate_file(prod, 5), [row(32, "a bird in a tree", negs_c)], 5)
    table = {(30, "a dog on a mat"): 0.6, **{(30, n): 0.1 * (k + 1) for k, n in enumerate(negs_a)},  # rank 0
             (31, "a cat near a box"): 0.2, (31, negs_b[2]): 0.5, **{(31, n): 0.1 for n in negs_b if n != negs_b[2]},
             (32, "a bird in a tree"): 0.3, (32, negs_c[4]): 0.3, **{(32, n): 0.0 for n in negs_c[:4]}}  # a tie
    inputs = {"crepe_prod_dir": str(prod), "crepe_images": str(images)}
    p = "crepe/negate"
    # ranks (ties counted right, CREPE's argsort): 0, 1, 0 -> R@1 2/3; strict ranks 0, 1, 1 -> 1/3; R@3 3/3;
    # complexity 4: 1/2, complexity 5: 1/1 -> macro 3/4; chance 1/6
    expected = {f"{p}/acc": 2 / 3, f"{p}/acc_tie_counts_wrong": 1 / 3, f"{p}/recall_at_3": 1.0, f"{p}/macro_acc": 0.75,
                f"{p}/chance": 1 / 6, f"{p}/n": 3, f"{p}/complexity/4/acc": 0.5, f"{p}/complexity/5/acc": 1.0,
                f"{p}/complexity/4/n": 2, f"{p}/complexity/5/n": 1}
    return Fixture(inputs, table, expected)


def _as_flickr(f: Fixture, old: str, new: str) -> Fixture:
    """The same fixture under the Flickr30k input names and metric prefix."""
    inputs = {k.replace("coco_karpathy_test", "flickr_karpathy_test").replace("coco_images", "flickr_images"): v
              for k, v in f.inputs.items()}
    return Fixture(inputs, f.table, {k.replace(old, new): v for k, v in f.expected.items()}, f.known)


def flickr_retrieval(root: Path) -> Fixture:
    return _as_flickr(coco_retrieval(root), "retrieval/coco/", "retrieval/flickr30k/")


def flickr_order(root: Path) -> Fixture:
    return _as_flickr(coco_order(root), "aro/coco_order/", "aro/flickr30k_order/")


BUILDERS = {"vg_relation": vg_relation, "vg_attribution": vg_attribution, "coco_order": coco_order,
            "coco_retrieval": coco_retrieval, "flickr_order": flickr_order, "flickr_retrieval": flickr_retrieval,
            "sugarcrepe": sugarcrepe, "valse": valse, "vlchecklist": vlchecklist,
            "ccneg": ccneg, "crepe_negate": crepe_negate, "replace": replace, "swap": swap}


def build(name: str, root: Path) -> Fixture:
    return BUILDERS[name](root)


def default_score(known: set[str]):
    """0 for a caption some table names, 0.3 for any other (the Order shuffles)."""
    return lambda i, t: 0.0 if t in known else UNKNOWN_CAPTION_SCORE


def merged(names, root: Path) -> Fixture:
    out = Fixture({}, {}, {})
    for n in names:
        f = build(n, root)
        out.inputs.update(f.inputs)
        out.table.update(f.table)
        out.expected.update(f.expected)
        out.known |= f.known
    return out

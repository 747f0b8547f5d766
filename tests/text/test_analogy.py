"""TSVLC analogy positives: the LLM few-shot generator on a tiny random-init causal LM (prompt, left-padded
batching parity, determinism, the reference's cut / invalid rules) and the toy scene-graph paraphrases (each rule,
exactness against the scene graph, vocabulary, on generated and on-disk world captions)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from vlcomp.text.analogy import (
    PROMPT_TEMPLATE,
    RULES,
    AnalogyGenerator,
    LlmAnalogies,
    SceneParaphrases,
    build_prompt,
    cut_continuation,
    load_causal_lm,
    parse_toy_caption,
)
from vlcomp.world.captions import CaptionConfig
from vlcomp.world.concepts import (
    ALL_COLOURS,
    ALL_RELATIONS,
    COUNT_WORDS,
    EXTENDED_SYNONYMS,
    MATERIALS,
    NEGATION_WORDS,
    RELATIONS,
    SHAPES,
    SIZES,
    STATES,
    SUPPORT_SHAPES,
    SYNONYMS,
    WEB_ONLY_SHAPES,
    world_words,
)
from vlcomp.world.scene import Obj, Scene, WorldConfig, compute_relations

REPO = Path(__file__).resolve().parents[2]
CATALOG = REPO.parent / "shared" / "papers" / "tsvlc.md"

CAPTIONS = [
    "a red circle to the left of a blue square",
    "a cat",
    "the dotted arrow is pointing at the star with a large hollow diamond",
    "a baby crying next to a box",
    "two dogs",
]

# ----------------------------------------------------------------------------------------------------------------
# Real profile: LLM few-shot prompting
# ----------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_lm(word_tokenizer):
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = word_tokenizer([build_prompt(c) for c in CAPTIONS] + ["red circle square blue"])
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=len(tok), n_positions=256, initializer_range=0.5,
                     bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    return GPT2LMHeadModel(cfg).eval(), tok


def test_prompt_is_the_reference_template_verbatim() -> None:
    expected = (
        "a woman standing left to a sitting cat is semantic similar to a cat standing right to a woman. "
        "a baby crying to the right of a box is semantic similar to a box placed to the left of a crying baby. "
        "a man sitting to the right of a dog is semantic similar to a dog sitting to the left of a man. "
        "a blue boat is semantic similar to a boat that is blue. {caption} is semantic similar to "
    )
    assert PROMPT_TEMPLATE == expected
    assert build_prompt("a red {x} circle") == expected.replace("{caption}", "a red {x} circle")
    assert build_prompt("a cat").endswith(". a cat is semantic similar to ")
    if CATALOG.exists():  # the catalog quotes it between backticks, trailing space included
        quoted = re.findall(r"`(a woman standing left to[^`]*)`", CATALOG.read_text())
        assert quoted == [PROMPT_TEMPLATE]


def test_generators_satisfy_the_protocol(tiny_lm) -> None:
    assert isinstance(LlmAnalogies(*tiny_lm), AnalogyGenerator)
    assert isinstance(SceneParaphrases(0), AnalogyGenerator)


def test_batched_generation_equals_one_at_a_time(tiny_lm) -> None:
    model, tok = tiny_lm
    lengths = {len(tok(build_prompt(c))["input_ids"]) for c in CAPTIONS}
    assert len(lengths) > 2  # the batch is really padded
    one = LlmAnalogies(model, tok, max_new_tokens=10, batch_size=1).continuations(CAPTIONS)
    for bs in (2, 3, 8):
        assert LlmAnalogies(model, tok, max_new_tokens=10, batch_size=bs).continuations(CAPTIONS) == one
    assert all(len(t.split()) == 10 for t in one)  # no eos in this tiny model: max_new_tokens words each
    assert len(set(one)) > 1


def test_generation_is_deterministic(tiny_lm) -> None:
    model, tok = tiny_lm
    gen = LlmAnalogies(model, tok, max_new_tokens=8, batch_size=4)
    first = gen(CAPTIONS)
    assert gen(CAPTIONS) == first
    assert LlmAnalogies(model, tok, max_new_tokens=8, batch_size=4)(list(reversed(CAPTIONS))) == first[::-1]
    assert len(first) == len(CAPTIONS)
    for c, out in zip(CAPTIONS, gen.continuations(CAPTIONS), strict=True):
        assert first[CAPTIONS.index(c)] == cut_continuation(out, c)
    assert gen([]) == []


def test_generate_call_is_greedy_and_left_padded(tiny_lm) -> None:
    model, tok = tiny_lm
    calls: list[dict] = []

    class Spy:
        def eval(self):
            return self

        def generate(self, **kw):
            calls.append(kw)
            return model.generate(**kw)

    LlmAnalogies(Spy(), tok, max_new_tokens=5, batch_size=8)(CAPTIONS[:2])
    (kw,) = calls
    assert kw["do_sample"] is False and kw["num_beams"] == 1 and kw["max_new_tokens"] == 5
    mask, ids = kw["attention_mask"], kw["input_ids"]
    short = int(mask.sum(1).argmin())
    assert mask[short, 0] == 0 and mask[short, -1] == 1  # left padding
    assert (ids[mask == 0] == tok.pad_token_id).all()


class ScriptedLM:
    """Appends a scripted continuation (one per prompt, in call order) to each prompt."""

    def __init__(self, tok, continuations: list[str]) -> None:
        self.tok, self.todo = tok, list(continuations)

    def eval(self):
        return self

    def generate(self, input_ids, attention_mask, **kw):
        new = [self.tok(self.todo.pop(0))["input_ids"] + [self.tok.eos_token_id] for _ in range(len(input_ids))]
        width = max(len(x) for x in new)
        new = torch.tensor([x + [self.tok.pad_token_id] * (width - len(x)) for x in new])
        return torch.cat([input_ids, new], dim=1)


@pytest.mark.parametrize(("continuation", "expected"), [
    ("a blue square to the right of a red circle . a cat", "a blue square to the right of a red circle"),
    ("a blue square to the right of a red circle", "a blue square to the right of a red circle"),  # no '.'
    (". a blue square", None),  # empty before the first '.'
    ("", None),  # nothing generated (eos at once)
    ("a red circle to the left of a blue square . a cat", None),  # the caption itself
])
def test_cut_and_invalid_rules(continuation: str, expected: str | None, word_tokenizer) -> None:
    caption = CAPTIONS[0]
    tok = word_tokenizer([build_prompt(caption), continuation])
    gen = LlmAnalogies(ScriptedLM(tok, [continuation, continuation]), tok, batch_size=2)
    assert gen([caption, caption]) == [expected, expected]


def test_cut_continuation_on_text() -> None:
    assert cut_continuation("  a box placed left to a baby.  a man. ", "x") == "a box placed left to a baby"
    assert cut_continuation(" .", "x") is None
    assert cut_continuation("a  cat  . ", "a cat") is None  # whitespace-normalised comparison
    assert cut_continuation("A cat.", "a cat") == "A cat"  # case-sensitive, like the reference's string test


def test_llm_argument_errors(tiny_lm) -> None:
    model, tok = tiny_lm
    with pytest.raises(ValueError, match="batch_size"):
        LlmAnalogies(model, tok, batch_size=0)
    with pytest.raises(ValueError, match="max_new_tokens"):
        LlmAnalogies(model, tok, max_new_tokens=True)
    with pytest.raises(ValueError, match="captions must be a list"):
        LlmAnalogies(model, tok)("a cat")  # type: ignore[arg-type]


def test_load_causal_lm_offline(tiny_lm, tmp_path) -> None:
    model, tok = tiny_lm
    with pytest.raises(FileNotFoundError, match="vlcomp-test/no-such-lm"):
        load_causal_lm("vlcomp-test/no-such-lm")
    with pytest.raises(FileNotFoundError, match="missing_dir"):
        load_causal_lm(tmp_path / "missing_dir")
    (tmp_path / "empty").mkdir()
    with pytest.raises((FileNotFoundError, ValueError), match="empty"):
        load_causal_lm(tmp_path / "empty")
    model.save_pretrained(tmp_path / "lm")
    tok.save_pretrained(tmp_path / "lm")
    model2, tok2 = load_causal_lm(tmp_path / "lm")
    assert not model2.training
    want = LlmAnalogies(model, tok, max_new_tokens=6).continuations(CAPTIONS)
    assert LlmAnalogies(model2, tok2, max_new_tokens=6).continuations(CAPTIONS) == want


# ----------------------------------------------------------------------------------------------------------------
# Toy profile: scene-graph-exact paraphrases
# ----------------------------------------------------------------------------------------------------------------

_CANON = {w: k for k, ws in SYNONYMS.items() for w in (k, *ws)}
_CONTENT = set(SHAPES + WEB_ONLY_SHAPES) | set(ALL_COLOURS) | set(_CANON) | set(SIZES) | set(MATERIALS) | set(STATES)
_VOCAB = set(world_words())
_SHAPE_WORDS = set(SHAPES + WEB_ONLY_SHAPES + SUPPORT_SHAPES)


def _words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9 ]+", " ", text.lower()).split()  # as the toy tokenizer splits


def _content(text: str) -> Counter:
    return Counter(_CANON.get(w, w) for w in _words(text) if w in _CONTENT)


def _stated_fact(text: str, scene: Scene) -> tuple[int, str, int]:
    """(subject id, relation, object id) a relation caption states, read off its words independently of the
    module's parser: the longest relation phrase, the last shape before it and the first shape after it."""
    words = _words(text)
    best = None
    for phrase in ALL_RELATIONS:
        toks = phrase.split()
        for i in range(len(words) - len(toks) + 1):
            if words[i:i + len(toks)] == toks and (best is None or len(toks) > len(best[1].split())):
                best = (i, phrase)
    assert best is not None, text
    i, phrase = best
    before = [w for w in words[:i] if w in _SHAPE_WORDS][-1]
    after = [w for w in words[i + len(phrase.split()):] if w in _SHAPE_WORDS][0]
    ids = {o.shape: o.id for o in scene.objects}
    return ids[before], phrase, ids[after]


def _check_paraphrases(captions: list[str], scenes: list[Scene], seed: int = 0, relations=RELATIONS,
                       vocab: set[str] = _VOCAB) -> tuple[Counter, int]:
    """Assert (a)-(d) for every emitted paraphrase; return the rule counts and the number of captions.
    ``relations`` / ``vocab``: the captions' world's relation inventory and tokenizer words (default: the first
    world's)."""
    gen = SceneParaphrases(seed, relations=relations)
    rules: Counter = Counter()
    for caption, scene in zip(captions, scenes, strict=True):
        got = gen.paraphrase(caption, scene)
        if got is None:
            continue
        out, rule = got
        rules[rule] += 1
        assert out != caption  # (a)
        assert _content(out) == _content(caption), (caption, out)  # (b)
        assert set(_words(out)) <= vocab, (caption, out)  # the toy tokenizer knows every word
        if rule == "converse":  # (c)
            s, rel, o = _stated_fact(out, scene)
            assert (s, rel, o) in scene.relations, (caption, out)
            s0, rel0, o0 = _stated_fact(caption, scene)
            assert (s, rel, o) == (o0, ALL_RELATIONS[rel0].converse, s0)
    return rules, len(captions)


def _scene(*objs: Obj) -> Scene:
    return Scene("t/0", "black", list(objs), compute_relations(list(objs), WorldConfig()))


LEFT_RIGHT = _scene(Obj(0, "circle", "red", "large", "plain", "solid", 10, 24, 5),
                    Obj(1, "square", "blue", "small", "striped", "solid", 36, 24, 3))


def _only(rule: str, caption: str, scene: Scene | None = LEFT_RIGHT, seed: int = 0) -> str | None:
    return SceneParaphrases(seed, rules=[rule])([caption], [scene])[0]


def test_converse_rule() -> None:
    assert (0, "to the left of", 1) in LEFT_RIGHT.relations
    cases = {
        "a red circle to the left of a blue square": "a blue square to the right of a red circle",
        "there is a circle to the left of a square": "there is a square to the right of a circle",
        "the large circle is to the left of the square": "the square is to the right of the large circle",
        "circle to the left of striped square": "striped square to the right of circle",
        "a circle to the left of a square on a black background": "a square to the right of a circle on a black background",
        "A circle sits to the left of a small square.": "A small square sits to the right of a circle.",
        "We see a circle to the left of a square .": "We see a square to the right of a circle .",
        "an arrow to the right of an orange circle": None,  # no arrow in the scene
    }
    for caption, want in cases.items():
        assert _only("converse", caption) == want, caption
    assert _only("converse", "a circle to the right of a square") is None  # false in the scene graph
    assert _only("converse", "a red circle to the left of a blue square", scene=None) is None  # cannot check


def test_converse_needs_the_converse_fact_and_unique_shapes() -> None:
    broken = Scene("t/1", "black", LEFT_RIGHT.objects, [r for r in LEFT_RIGHT.relations if r[1] != "to the right of"])
    assert _only("converse", "a circle to the left of a square", broken) is None
    twice = Scene("t/2", "black", [*LEFT_RIGHT.objects, Obj(2, "circle", "green", "small", "plain", "solid", 24, 5, 3)],
                  LEFT_RIGHT.relations)
    assert _only("converse", "a circle to the left of a square", twice) is None
    arrow = _scene(Obj(0, "arrow", "red", "large", "plain", "solid", 10, 24, 5, heading=0.0),
                   Obj(1, "star", "blue", "small", "plain", "solid", 36, 24, 3))
    assert (0, "pointing at", 1) in arrow.relations
    assert SceneParaphrases(0)(["an arrow pointing at a star"], [arrow]) == [None]  # no converse, no other rule


def test_converse_with_a_third_object_and_covering() -> None:
    objs = [Obj(0, "heart", "red", "large", "plain", "solid", 20, 20, 10, z=1),
            Obj(1, "diamond", "cyan", "small", "dotted", "solid", 22, 21, 6, z=0),
            Obj(2, "star", "green", "small", "plain", "solid", 40, 40, 3, z=2)]
    sc = _scene(*objs)
    assert (0, "covering", 1) in sc.relations
    assert _only("converse", "heart covering diamond with a green star", sc) == "diamond covered by heart with a green star"
    assert _only("converse", "the diamond is covered by the heart and a star", sc) == (
        "the heart is covering the diamond and a star")


def test_clause_rule() -> None:
    outs = {_only("clause", "a large red circle", seed=s) for s in range(20)}
    assert outs == {"a circle that is large and red", "a circle that is red and large"}
    assert _only("clause", "an orange arrow") == "an arrow that is orange"
    assert _only("clause", "a red circle") == "a circle that is red"
    three = _only("clause", "a small blue striped square")
    assert re.fullmatch(r"a square that is \w+, \w+ and \w+", three or ""), three
    assert _only("clause", "A striped square is to the right of a circle.") == (
        "A square that is striped is to the right of a circle.")
    # not for a noun phrase followed by "and"; a noun phrase without attributes has no clause
    assert _only("clause", "a red circle and a square") is None
    assert _only("clause", "the red circle and the blue square") == "the red circle and the square that is blue"
    assert _only("clause", "a circle to the left of a square") is None


def test_reorder_rule() -> None:
    assert _only("reorder", "a red circle and a blue square") == "a blue square and a red circle"
    assert _only("reorder", "the circle and the blue square") == "the blue square and the circle"
    assert _only("reorder", "An orange circle and a square.") == "A square and an orange circle."
    three = {_only("reorder", "a circle and a square and a star", seed=s) for s in range(40)}
    assert len(three) == 5 and "a circle and a square and a star" not in three  # the 5 other orders
    comma = _only("reorder", "diamond, square, blue, dotted")
    assert comma != "diamond, square, blue, dotted" and sorted(comma.split(", ")) == ["blue", "diamond", "dotted", "square"]
    # the attribute list only (the shape list has one distinct item... twice: not reorderable)
    assert _only("reorder", "clipart of star in dotted and blue") == "clipart of star in blue and dotted"
    assert _only("reorder", "clipart of star and moon in dotted and dotted") == "clipart of moon and star in dotted and dotted"
    head = {_only("reorder", "a star and a circle, pink orange", seed=s) for s in range(20)}
    assert head == {"a circle and a star, pink orange", "a star and a circle, orange pink"}
    assert _only("reorder", "a red circle") is None
    assert _only("reorder", "a circle to the left of a square") is None


def test_synonym_rule() -> None:
    assert _only("synonym", "a large red circle") == "a big red circle"
    assert _only("synonym", "the little square is to the right of the circle") == (
        "the small square is to the right of the circle")
    assert {_only("synonym", "a big circle and a small square", seed=s) for s in range(20)} == {
        "a large circle and a small square", "a big circle and a little square"}
    assert _only("synonym", "a red circle") is None


def test_no_rule_gives_none_and_the_choice_is_uniform() -> None:
    gen = SceneParaphrases(0)
    assert gen(["a circle", "hello world", "", "a circle to the left of a hexagon"], None) == [None] * 4
    # converse, clause and synonym all apply: each about a third of the time
    caption = "the large red circle is to the left of the square"
    rules = Counter(gen.paraphrase(caption, LEFT_RIGHT)[1] for _ in range(3000))
    assert set(rules) == {"converse", "clause", "synonym"}
    assert all(abs(n - 1000) < 120 for n in rules.values()), rules


def test_determinism_and_batch_parity() -> None:
    captions = ["a large red circle to the left of a blue square", "a red circle and a blue square",
                "diamond, square, blue, dotted", "a big circle", "a circle"] * 4
    scenes = [LEFT_RIGHT] * len(captions)
    batch = SceneParaphrases(3)(captions, scenes)
    assert SceneParaphrases(np.random.default_rng(3))(captions, scenes) == batch
    one = SceneParaphrases(3)
    assert [one([c], [s])[0] for c, s in zip(captions, scenes, strict=True)] == batch
    assert batch[4] is None and all(b is not None for b in batch[:4])


def test_toy_argument_errors() -> None:
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        SceneParaphrases("0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown rules"):
        SceneParaphrases(0, rules=["converse", "antonym"])
    with pytest.raises(ValueError, match="2 captions but 1 scenes"):
        SceneParaphrases(0)(["a", "b"], [LEFT_RIGHT])
    assert list(RULES) == ["converse", "clause", "reorder", "synonym"]


def test_generated_world_captions(tmp_path) -> None:
    """Every caption style of a freshly generated world parses, and every paraphrase is exact."""
    from vlcomp.world import Split
    from vlcomp.world.generate import SplitSpec, generate_world

    wcfg = WorldConfig(colour_prior=0.5, layout_prior=0.8, web_only_shapes=("hexagon", "moon"),
                       web_only_colours=("pink", "brown"), max_objects=4, hollow_prob=0.3)
    ccfg = CaptionConfig(web_bind_prob=0.5, web_relation_prob=0.5, synonym_prob=0.5, and_prob=0.2, extra_prob=0.7,
                         extra_and_prob=0.4, detailed_colour_prob=0.5, detailed_size_prob=0.5)
    specs = [SplitSpec("web", 150, "web", twin_prob=0.3), SplitSpec("coco", 60, "coco"),
             SplitSpec("flickr", 40, "flickr")]
    generate_world(specs, wcfg, ccfg, 0, tmp_path)
    all_rules: Counter = Counter()
    for spec in specs:
        split = Split(tmp_path, spec.name)
        pairs = [(c, sc) for cs, sc in zip(split.captions(), split.scenes(), strict=True) for c in cs]
        unparsed = [c for c, _ in pairs if parse_toy_caption(c).parsed is None]
        assert not unparsed, unparsed[:5]
        rules, n = _check_paraphrases([c for c, _ in pairs], [sc for _, sc in pairs])
        assert sum(rules.values()) / n > 0.9, (spec.name, rules, n)
        all_rules += rules
    assert set(all_rules) == set(RULES), all_rules


@pytest.mark.parametrize(("name", "n_images"), [("web", 400), ("coco_train", 80)])
def test_on_disk_world_captions(name: str, n_images: int) -> None:
    from vlcomp.world import Split

    if not (REPO / "data" / "world" / name / "captions.json").exists():
        pytest.skip(f"data/world/{name} not generated")
    from vlcomp.config import load_params
    from vlcomp.text.tokenizer import get_tokenizer
    from vlcomp.world import world_configs

    params = load_params(REPO / "params.yaml")  # the world data/world was generated with (dvc repro)
    relations = world_configs(params)[0].relations
    vocab = set(get_tokenizer(params["clip"]["tokenizer"], params["clip"]["arch"], 32).words)
    split = Split(REPO / "data" / "world", name)
    pairs = [(c, sc) for cs, sc in zip(split.captions()[:n_images], split.scenes()[:n_images], strict=True)
             for c in cs]
    # The paraphraser does not read the second world's count prefixes, negations and extended synonyms (box,
    # over, beside, ...): those captions get no paraphrase (Hard Positives' issue extends the rules). Coverage is
    # judged on the others; the unread ones must stay a minority (COCO twin: about a quarter).
    unread = set(COUNT_WORDS) | set(NEGATION_WORDS) | {w for k, ws in EXTENDED_SYNONYMS.items() if k not in SYNONYMS
                                                       for w in ws}
    readable = [(c, sc) for c, sc in pairs if not set(_words(c)) & unread]
    assert len(readable) >= 0.7 * len(pairs), (len(readable), len(pairs))
    rules, n = _check_paraphrases([c for c, _ in readable], [sc for _, sc in readable], relations=relations,
                                  vocab=vocab)
    assert n >= 300 and sum(rules.values()) / n > 0.9, (rules, n)

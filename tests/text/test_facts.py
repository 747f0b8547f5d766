"""The closed-grammar fact reader of the blind-text ceiling (vlcomp.text.facts): what each caption form of the
toy twins reads as, by hand."""

from __future__ import annotations

import pytest

from vlcomp.text.facts import ATTRIBUTE, RELATION, SHAPE, Fact, read_caption


def shape(s: str) -> Fact:
    return Fact(SHAPE, (s,))


def attr(kind: str, value: str, s: str) -> Fact:
    return Fact(ATTRIBUTE, (kind, value, s))


def rel(r: str, s: str, o: str) -> Fact:
    return Fact(RELATION, (r, s, o))


def test_a_relation_caption_reads_its_shapes_and_relation():
    r = read_caption("the heart is above the diamond")
    assert set(r.facts) == {shape("heart"), shape("diamond"), rel("above", "heart", "diamond")}
    assert r.negated == () and r.unread == ()
    swapped = read_caption("the diamond is above the heart")
    assert rel("above", "diamond", "heart") in swapped.facts  # the subject is the first noun phrase


def test_noun_phrases_bind_their_attributes_synonyms_read_as_the_world_word():
    r = read_caption("A big red striped circle sits to the left of a little hollow square.")
    assert set(r.facts) == {shape("circle"), shape("square"), attr("size", "large", "circle"),
                            attr("colour", "red", "circle"), attr("material", "striped", "circle"),
                            attr("size", "small", "square"), attr("state", "hollow", "square"),
                            rel("to the left of", "circle", "square")}
    assert r.unread == ("sits",)
    # VG-Attribution's swap binds the same words to the other shapes
    a = read_caption("the green square and the yellow diamond")
    b = read_caption("the yellow square and the green diamond")
    assert attr("colour", "green", "square") in a.facts and attr("colour", "green", "diamond") in b.facts


def test_facts_are_in_canonical_order():
    a = read_caption("the red circle and the blue square")
    b = read_caption("the blue square and the red circle")
    assert a.facts == b.facts  # the same facts in another order read the same (their blind scores are equal)


def test_a_relative_clause_binds_attributes_and_not_negates_one():
    r = read_caption("a white circle that is large, that is not dotted and above a blue arrow")
    assert attr("size", "large", "circle") in r.facts and rel("above", "circle", "arrow") in r.facts
    assert r.negated == ((attr("material", "dotted", "circle"),),)
    # word salad is no clause: "circle cyan" binds nothing
    salad = read_caption("a is there hollow below circle cyan a diamond")
    assert not any(f.kind == ATTRIBUTE and f.key[2] == "circle" for f in salad.facts)
    assert "hollow" in salad.unread and "cyan" in salad.unread


def test_negated_noun_phrases_are_denied_groups_with_their_relations():
    r = read_caption("there is no small white circle to the right of a large striped square. "
                     "a star in front of no circle.")
    assert set(r.facts) == {shape("square"), attr("size", "large", "square"), attr("material", "striped", "square"),
                            shape("star")}
    assert set(r.negated) == {
        tuple(sorted((shape("circle"), attr("size", "small", "circle"), attr("colour", "white", "circle"),
                      rel("to the right of", "circle", "square")))),
        tuple(sorted((shape("circle"), rel("in front of", "star", "circle"))))}
    assert read_caption("a yellow star without a cyan square").negated == (
        tuple(sorted((shape("square"), attr("colour", "cyan", "square")))),)
    assert read_caption("the square not to the right of the diamond").negated == (
        (rel("to the right of", "square", "diamond"),),)
    assert read_caption("there is no cross").negated == ((shape("cross"),),)


def test_numbers_and_plurals_are_not_read_so_counting_foils_read_the_same():
    assert read_caption("there are two diamonds") == read_caption("there are three diamonds")
    assert read_caption("there are two diamonds").facts == (shape("diamond"),)


@pytest.mark.parametrize("caption", ["a man riding a horse", "", "covering"])
def test_a_caption_outside_the_grammar_has_no_fact(caption):
    assert read_caption(caption).empty

"""A caption read into scene-graph facts with the toy world's closed grammar: what the blind-text ceiling
(:mod:`vlcomp.eval.blind`) knows of a caption.

The grammar is the world's vocabulary (:mod:`vlcomp.world.concepts`), nothing else:

- a **noun phrase** is ``[determiner] [attribute words] <shape>`` (``a large red striped circle``, ``the hollow
  square``, ``two diamonds``): one ``shape`` fact, and one ``attribute`` fact per attribute word, bound to that
  shape. Attribute words are the world's sizes, colours, materials (``plain``, ``striped``, ``dotted``) and states
  (``solid``, ``hollow``). A synonym of the world's table (:data:`SYNONYM_OF`) reads as the word it stands for
  (``big`` is ``large``). A plural shape noun (``diamonds``) is the shape; numbers and quantifiers (``one``,
  ``two``, ``some``) are not read.
- attribute words *after* a noun phrase, with only ``that``, ``is``, ``are``, ``and``, ``,`` and ``not`` between,
  ``is`` or ``are`` among them (CC-Neg's ``a red heart that is small``, ``that is large, that is dotted``), are
  bound to that noun phrase (a relative clause);
- a **relation phrase** of :data:`~vlcomp.world.concepts.RELATIONS` (longest match: ``to the left of``, ``in front
  of``, ``pointing at``, ``covered by``) between the last noun phrase of the sentence (its subject; a verb such as
  ``is`` / ``sits`` / ``placed`` or a clause may come between) and the noun phrase right after it (its object) is
  one ``relation`` fact ``(relation, subject shape, object shape)``;
- **negation**: ``not`` before an attribute word or a relation phrase negates that fact; ``no`` / ``without`` /
  ``not`` before a noun phrase negates the noun phrase: its facts and the relation facts it takes part in are one
  *negated group* (``there is no small circle to the right of a square`` says that no small circle is to the right
  of a square: the conjunction of those facts is false). An attribute negated inside a negated noun phrase is not
  read.

Sentences (``.``) are read one at a time (CREPE's captions have several). Every other word (backgrounds,
``with``, ``there is``, verbs the world has no relation for) is not read; a caption the grammar cannot read at
all has no fact. :func:`read_caption` returns a :class:`Reading`: the positive facts and the negated groups, each
in a canonical order (so two captions stating the same facts in another order read the same), and the words left
unread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..world import concepts as C

SHAPE, ATTRIBUTE, RELATION = "shape", "attribute", "relation"
#: The attribute kinds, as the scene graph names them (:meth:`vlcomp.world.scene.Obj.attributes`).
ATTRIBUTE_KINDS = ("colour", "size", "material", "state")
#: Every shape the grammar reads: the COCO-twin shapes, the web-only ones and, where the world has them, the flat
#: supports.
SHAPE_WORDS: tuple[str, ...] = C.SHAPES + C.WEB_ONLY_SHAPES + C.SUPPORT_SHAPES
#: Attribute kind -> the values the world has of it (what the smoothing spreads over).
ATTRIBUTE_VALUES: dict[str, tuple[str, ...]] = {"colour": tuple(C.ALL_COLOURS), "size": tuple(C.SIZES),
                                                "material": tuple(C.MATERIALS), "state": tuple(C.STATES)}
#: Every relation phrase the grammar reads: every relation any world can show (the table phrases are looked up in,
#: where the world has one beside the first world's).
RELATION_PHRASES: tuple[str, ...] = tuple(C.ALL_RELATIONS)
#: Synonym -> the word the scene graph uses: the world's synonym table (its extended one where the world has it:
#: ``box`` is a square, ``over`` is above), read whether or not the captions of a split use it.
SYNONYM_OF: dict[str, str] = {w: canon for canon, ws in C.EXTENDED_SYNONYMS.items()
                              for w in ws}
#: Attribute word -> (kind, value the scene graph uses).
ATTRIBUTE_WORDS: dict[str, tuple[str, str]] = {
    **{v: (k, v) for k, vs in ATTRIBUTE_VALUES.items() for v in vs},
    **{w: (k, c) for w, c in SYNONYM_OF.items() for k, vs in ATTRIBUTE_VALUES.items() if c in vs},
}


def _plural(word: str) -> str:
    return word + ("es" if word.endswith(("s", "x", "sh", "ch")) else "s")


#: Shape noun (singular or plural, synonyms included) -> the shape.
SHAPE_NOUNS: dict[str, str] = {
    **{w: w for w in SHAPE_WORDS}, **{w: c for w, c in SYNONYM_OF.items() if c in SHAPE_WORDS}}
SHAPE_NOUNS |= {_plural(w): c for w, c in list(SHAPE_NOUNS.items())}
#: Relation phrases as word tuples (synonyms included), longest first: ``to the left of`` whole, ``covered by``
#: before any shorter phrase.
RELATION_WORDS: tuple[tuple[tuple[str, ...], str], ...] = tuple(sorted(
    [(tuple(p.split()), p) for p in RELATION_PHRASES]
    + [(tuple(w.split()), c) for w, c in SYNONYM_OF.items() if c in RELATION_PHRASES],
    key=lambda t: (-len(t[0]), t[0])))
DETERMINERS = frozenset({"a", "an", "the", "one", "two", "three", "four", "some", "this"})
NEGATORS = frozenset({"no", "without"})  # before a noun phrase; "not" is read by what follows it
#: Words allowed between a noun phrase and the attribute words bound to it after it (a relative clause).
CLAUSE_WORDS = frozenset({"that", "is", "are", "and", ",", "which"})
#: A clause needs one of these ("a circle that is large"; "circle cyan", word salad of a shuffled caption, is no
#: clause).
CLAUSE_VERBS = frozenset({"is", "are"})

_TOKEN = re.compile(r"[a-z]+|[.,]")


@dataclass(frozen=True, order=True)
class Fact:
    """One scene-graph fact: ``("shape", (shape,))``, ``("attribute", (kind, value, shape))`` or
    ``("relation", (relation, subject shape, object shape))``."""

    kind: str
    key: tuple[str, ...]


@dataclass(frozen=True)
class Reading:
    """What the grammar read of one caption: ``facts`` (stated true), ``negated`` (groups stated false: each
    group's conjunction is what the caption denies) and the ``unread`` words, in caption order."""

    facts: tuple[Fact, ...]
    negated: tuple[tuple[Fact, ...], ...]
    unread: tuple[str, ...]

    @property
    def empty(self) -> bool:
        """True when no fact was read (the caption's blind score is 0)."""
        return not self.facts and not self.negated


@dataclass(eq=False)
class _NounPhrase:
    shape: str
    attributes: list[tuple[str, str]]
    negated: bool
    negated_attributes: list[tuple[str, str]] = field(default_factory=list)
    relations: list[Fact] = field(default_factory=list)  # relation facts denied with this phrase
    joined: _NounPhrase | None = None  # a denied phrase whose group this denied one joined

    def facts(self) -> list[Fact]:
        return [Fact(SHAPE, (self.shape,)), *(Fact(ATTRIBUTE, (k, v, self.shape)) for k, v in self.attributes)]

    def group(self) -> _NounPhrase:
        """The denied phrase whose group holds this one's facts (itself unless it joined another)."""
        p = self
        while p.joined is not None:
            p = p.joined
        return p


def tokens(caption: str) -> list[str]:
    """Lower-cased words, with ``.`` and ``,`` as tokens of their own (other punctuation dropped)."""
    return _TOKEN.findall(caption.lower())


def _relation_at(words: list[str], i: int) -> tuple[str, int] | None:
    for toks, phrase in RELATION_WORDS:
        if tuple(words[i:i + len(toks)]) == toks:
            return phrase, len(toks)
    return None


def _elements(words: list[str]) -> list[tuple]:
    """One sentence's words as grammar elements: ``("np", shape, attrs)``, ``("attrs", attrs)`` (attribute words
    no shape follows), ``("rel", phrase)``, ``("not",)``, ``("neg",)`` (no / without), ``("word", w)``."""
    out: list[tuple] = []
    i = 0
    while i < len(words):
        w = words[i]
        rel = _relation_at(words, i)
        if rel is not None:
            out.append(("rel", rel[0]))
            i += rel[1]
        elif w == "not":
            out.append(("not",))
            i += 1
        elif w in NEGATORS:
            out.append(("neg",))
            i += 1
        elif w in DETERMINERS:
            i += 1  # read as nothing: "a", "the", numbers
        elif w in ATTRIBUTE_WORDS or w in SHAPE_NOUNS:
            j, attrs = i, []
            while j < len(words) and words[j] in ATTRIBUTE_WORDS:
                attrs.append(ATTRIBUTE_WORDS[words[j]])
                j += 1
            shape = SHAPE_NOUNS.get(words[j]) if j < len(words) else None
            if shape is not None:
                out.append(("np", shape, tuple(attrs), tuple(words[i:j + 1])))
                i = j + 1
            else:
                out.append(("attrs", tuple(attrs), tuple(words[i:j])))
                i = j
        else:
            out.append(("word", w))
            i += 1
    return out


def _read_sentence(words: list[str]) -> tuple[list[Fact], list[tuple[Fact, ...]], list[str]]:
    facts: list[Fact] = []
    negated: list[tuple[Fact, ...]] = []
    unread: list[str] = []
    phrases: list[_NounPhrase] = []
    last: _NounPhrase | None = None  # the subject of a following relation / the head of a following clause
    since_last: list[tuple] = []  # elements after `last` (a clause may hold only clause words)
    pending_neg = pending_not = False
    pending_rel: tuple[_NounPhrase, str, bool] | None = None  # (subject, phrase, negated): waiting for its object
    for el in _elements(words):
        kind = el[0]
        if kind == "neg":
            pending_neg = True
            continue
        if kind == "not":
            pending_not = True
            since_last.append(el)
            continue
        if kind == "np":
            np_ = _NounPhrase(el[1], list(el[2]), negated=pending_neg or pending_not)
            phrases.append(np_)
            if pending_rel is not None:
                subject, phrase, rel_neg = pending_rel
                fact = Fact(RELATION, (phrase, subject.shape, np_.shape))
                denied = [p.group() for p in (subject, np_) if p.negated]
                if denied:
                    denied[0].relations.append(fact)
                    if len(denied) == 2 and denied[1] is not denied[0]:
                        denied[1].joined = denied[0]  # both denied: one group
                elif rel_neg:
                    negated.append((fact,))
                else:
                    facts.append(fact)
                pending_rel = None
            last, since_last = np_, []
            pending_neg = pending_not = False
            continue
        if pending_rel is not None:  # a relation phrase no noun phrase follows: not read
            unread.append(pending_rel[1])
            pending_rel = None
        if kind == "rel":
            if last is None:
                unread.append(el[1])
            else:
                pending_rel = (last, el[1], pending_not)
        elif kind == "attrs":
            clause = (last is not None and any(e[0] == "word" and e[1] in CLAUSE_VERBS for e in since_last)
                      and all(e[0] in ("not", "clause") or (e[0] == "word" and e[1] in CLAUSE_WORDS)
                              for e in since_last))
            if clause:
                for a in el[1]:
                    if not pending_not:
                        last.attributes.append(a)
                    elif not last.negated:
                        last.negated_attributes.append(a)
                    else:
                        unread.append(a[1])  # a negation inside a denied noun phrase: not read
                since_last.append(("clause",))
            else:
                unread.extend(el[2])
                since_last.append(el)
        else:  # a plain word
            if pending_neg:
                unread.append("no")  # "no" / "without" with no noun phrase after it
            if el[1] not in CLAUSE_WORDS:
                unread.append(el[1])
            since_last.append(el)
        pending_neg = pending_not = False
    if pending_rel is not None:
        unread.append(pending_rel[1])
    groups: dict[int, list[Fact]] = {}
    for p in phrases:
        if p.negated:
            groups.setdefault(id(p.group()), []).extend(p.facts() + p.relations)
        else:
            facts += p.facts()
            negated += [(Fact(ATTRIBUTE, (k, v, p.shape)),) for k, v in p.negated_attributes]
    negated += [tuple(sorted(g)) for g in groups.values()]
    return facts, negated, unread


def read_caption(caption: str) -> Reading:
    """The facts a caption states (module docstring): each sentence read on its own, facts and negated groups in
    canonical (sorted) order."""
    words = tokens(caption)
    facts: list[Fact] = []
    negated: list[tuple[Fact, ...]] = []
    unread: list[str] = []
    sentence: list[str] = []
    for w in [*words, "."]:
        if w == ".":
            if sentence:
                f, n, u = _read_sentence(sentence)
                facts += f
                negated += n
                unread += u
            sentence = []
        else:
            sentence.append(w)
    return Reading(tuple(sorted(facts)), tuple(sorted(negated)), tuple(unread))

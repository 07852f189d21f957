"""User-typed text to an FTS5 query that cannot fail.

Why build it ourselves: FTS5 query syntax gives meaning to quotes, `-`, `*`, `^`, `:`, `+`,
parentheses and the words AND, OR, NOT and NEAR; passed through, `"unbalanced`, `dog -cat` or
`title: x` raise a syntax error (or search a column that does not exist). So the text is split
into words here, as FTS5's unicode61 tokenizer splits them (runs of letters and digits; the rest
separates), and every word goes in as a quoted string, which FTS5 reads as plain text whatever
it spells (`"and"`, `"near"`). The porter stemmer then works on both sides, so `jumps` finds
`jumping`.

Words are OR-ed and BM25 ranks the rows: a row holding more of the words, and rarer ones, comes
first, while a near miss (`dog jumps into pool` against `a dog leaps into the pool`) is still a
candidate for the model's refine stage. Common English function words are left out when the
query has other words (`the blue screen` is `blue OR screen`), since they match nearly every
row and only blur the ranking. The last word also matches as a prefix (`blu` finds `blue`), for
search-as-you-type.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+")
MAX_WORDS = 32  # a pasted paragraph still gives a bounded query

_STOPWORDS_TEXT = """
a an and are as at be by for from has have he her his in into is it its of on or she that the
their them then there these they this those to was were when where which while who will with
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def words(text: str) -> list[str]:
    """The words of `text` as the index sees them (lower case, punctuation gone), repeats and
    function words dropped (unless nothing else is left), at most MAX_WORDS."""
    found = list(dict.fromkeys(w.casefold() for w in _WORD.findall(text)))
    content = [w for w in found if w not in STOPWORDS]
    return (content or found)[:MAX_WORDS]


def quoted(word: str) -> str:
    """A word as an FTS5 string: read as text, never as an operator."""
    return '"' + word.replace('"', '""') + '"'


def match_expression(text: str, prefix_last: bool = True) -> str | None:
    """The MATCH expression for `text`, or None when it has no word at all (nothing to find).

    `prefix_last`: the last word also matches as a prefix (`"blu" OR "blu"*`).
    """
    found = words(text)
    if not found:
        return None
    terms = [quoted(w) for w in found]
    if prefix_last:
        last = terms[-1]
        terms[-1] = f"{last} OR {last}*"
    return " OR ".join(terms)

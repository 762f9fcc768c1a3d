"""Reading a question: what a typed question asks for, read once into a frozen Query (query.py), which search,
choosing and answers read instead of its text.

`parse.py` reads a question in order, each step taking what it recognises out
of the text (PR numbers, people, what is left out, times, order, paths, risks
and gains, areas and words); `when.py` reads times, for commands too; `form.py`
the shape of answer expected; `cues.py` what the words say beyond the fields;
`kept.py` writes a Query as data for a thread to keep. The words it reads by are
the lexicon's (store.understanding.vocabulary). May import store.understanding,
store.text, store.days and store.model.
"""

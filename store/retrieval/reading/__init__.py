"""Reading a question: what a typed question asks for, read once into the fields search and choosing use.

`parse.py` reads a question in order, each step taking what it recognises out
of the text (PR numbers, people, what is left out, times, order, paths, risks
and gains, areas and words); `when.py` reads times, for commands too; `form.py`
the shape of answer expected. May import store.understanding, store.text,
store.days and store.model.
"""

"""What is kept: the SQLite store and everything that reads or writes it, below the people side.

Imports stay inside store. Lower layers never import higher ones:
text -> days, model -> understanding -> subscription -> migrations -> db -> tables -> retrieval, report -> sources.
"""

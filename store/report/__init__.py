"""The daily report: its Markdown format (parsed and written byte for byte) and the day's report built from the store.

May import store.tables and below.
"""

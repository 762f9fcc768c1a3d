"""Text helpers every part uses: lazily compiled patterns, sentences and words, one-line errors, and URL origins.

Imports nothing of prdigest.
"""

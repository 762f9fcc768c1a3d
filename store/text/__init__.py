"""Text helpers every part uses: lazily compiled patterns, sentences and words, and one-line errors.

Imports nothing of prdigest.
"""

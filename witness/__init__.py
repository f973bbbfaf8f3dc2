"""Witness: speaker-labelled transcripts of recorded calls.

Importing this package does nothing heavy: no model loads, no network, no logging set-up.
"""

__version__ = "0.1.0"

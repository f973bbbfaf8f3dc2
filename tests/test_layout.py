"""The package's shape: no import cycle, not even through a function-level import."""

from __future__ import annotations

from scripts.module_map import import_cycles


def test_no_import_cycles():
    at_import, every = import_cycles()
    assert at_import == [] and every == []

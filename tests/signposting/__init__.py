"""Tests of adapter.signposting: link readers, cross-checks, resolution, fixture sites."""

"""Tests of adapter.jsonld: normalization and its fast paths."""

"""Tests of adapter.dataone: requirements, records, canonical JSON."""

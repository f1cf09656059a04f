"""Tests of adapter.page: extraction, JSON repair, the shared HTML tree."""

"""Tests of adapter.store: schema, statements, opening stores."""

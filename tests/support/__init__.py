"""Shared test helpers: fixture servers, stores, the Member Node, DataONE schemas, hostile cases."""

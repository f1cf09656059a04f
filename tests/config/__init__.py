"""Tests of adapter.config: loading and validating node configuration."""

"""Tests of adapter.service: the scheduler and daemon."""

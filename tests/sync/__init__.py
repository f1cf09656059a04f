"""Tests of adapter.sync: runs, workers, process pools, kills, grouped commits."""

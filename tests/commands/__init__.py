"""Tests of the adapter command line, run as a user runs it."""

"""Tests of adapter.discovery: robots.txt, sitemaps, the walk."""

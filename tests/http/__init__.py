"""Tests of adapter.http: fetching, address policy, TLS, politeness, the watchdog."""

"""Shared test helpers: fixture servers, stores, the Member Node, DataONE schemas, hostile cases."""

# `adapter serve` lowers its own priority by default (niceness 10). The suite runs three
# workers on two cores, so a niced server can starve for tens of seconds and miss a
# test's timeout. Tests not about niceness run it as started.
SERVE_AS_STARTED = ("--nice", "0")

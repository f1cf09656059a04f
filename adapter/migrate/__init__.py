"""Moving a member node from other software into the store: mnlite's opersist store."""

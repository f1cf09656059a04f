"""The database: schema, frontier, claims, record ledger, outbox, run history, host pacing."""

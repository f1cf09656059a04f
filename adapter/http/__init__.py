"""Polite, capped HTTP: fetcher, connections, address policy, body caps, retries, pacing."""

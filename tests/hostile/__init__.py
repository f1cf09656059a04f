"""The hostile corpus: caps, owners, servers and stores that misbehave."""

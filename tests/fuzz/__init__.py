"""Property-based tests (hypothesis) of the stages on generated input."""

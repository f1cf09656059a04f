"""One module per area of the `adapter` command; each exposes click commands."""

"""JSON-LD to one framed Dataset: offline contexts, expansion, framing, normalization."""

"""A landing page's bytes: HTML tree, charset, type sniffing, embedded JSON-LD and its repair."""

"""Finding landing pages: robots.txt, sitemaps and Signmaps, walked within the node's scope."""

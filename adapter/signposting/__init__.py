"""FAIR Signposting: typed links from headers, HTML, linksets and Signmaps, cross-checked."""

"""What DataONE's search index would hold for a Dataset: its indexer's fields and findings."""

"""What DataONE requires of a Dataset, and the sync records made from it."""

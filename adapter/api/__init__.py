"""The DataONE Member Node read API (WSGI) over the store's sync records."""

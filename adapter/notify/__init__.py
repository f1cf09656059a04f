"""COAR Notify: the /inbox of `adapter serve`, the answers it sends, and the pages it makes due."""

"""A sync run: discover, claim due pages, check them in threads or processes, write outcomes."""

"""Landing pages whose JSON-LD only JavaScript writes: run in a headless chromium, read back."""

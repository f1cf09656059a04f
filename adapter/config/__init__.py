"""The node configuration: YAML loaded, validated and turned into typed settings."""

"""DataONE slender-node adapter: schema.org Dataset landing pages -> DataONE sync records."""

__version__ = "0.1.0"
USER_AGENT = f"DataONE-SlenderAdapter/{__version__} (+https://github.com/DataONEorg)"

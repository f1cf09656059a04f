"""Tests of adapter.api: the Member Node app, XML, sysmeta, DataONE's own client."""

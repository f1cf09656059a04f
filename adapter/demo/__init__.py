"""The bundled demo repository (`adapter demo`): a handful of realistic landing pages.

`site/` is package data: robots.txt, a sitemap index with Signmap `rs:ln`
links, landing pages good and bad, an ISO 19139 metadata file, and
`_rules.json` for per-path status and signposting `Link` headers. The site is
written for the origin `https://demo.example`; `adapter.demo.server` serves it
on 127.0.0.1 with that origin rewritten to its own.
"""

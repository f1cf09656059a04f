"""The web pages: a check page for repository managers (`adapter web`, `adapter serve`).

Beside the Member Node API and the sync: it composes the pipeline and the
report below it, and never imports either of its neighbours.
"""

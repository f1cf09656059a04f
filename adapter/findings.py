"""Findings: what the adapter has to say about a repository's content.

Every code is declared once, as a `FindingType` beside the rule that raises it,
and registered here; `catalogue()` lists them all for the documentation and for
`adapter findings`. Findings are values: a bad page yields findings and the
run goes on.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from enum import StrEnum

import adapter
from adapter.slotpickle import fast_pickle


class Stage(StrEnum):
    """The stage a finding code names before its slash (`signposting/cite-as-missing`).

    Code that selects findings by stage compares `finding.stage` with a member, so a
    misspelt stage fails at import; a FindingType of an unknown stage fails too.
    """

    FETCH = "fetch"
    ROBOTS = "robots"
    DISCOVER = "discover"
    SITEMAP = "sitemap"
    RENDER = "render"  # the page's JavaScript run in a browser (`adapter.render`)
    EXTRACT = "extract"
    NORMALIZE = "normalize"
    DATAONE = "dataone"
    SOSO = "soso"
    SIGNPOSTING = "signposting"
    SHACL = "shacl"
    PIPELINE = "pipeline"
    SYNC = "sync"
    STORE = "store"


class Severity(StrEnum):
    ERROR = "error"  # DataONE cannot harvest this as it stands
    WARNING = "warning"  # harvestable, but something should be fixed
    INFO = "info"  # worth knowing; nothing to fix


@fast_pickle  # crosses processes in a multi-process sync
@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    message: str
    url: str = ""
    where: str | None = None

    @property
    def stage(self) -> str:
        """The code's stage, before its slash: compare it with a `Stage`."""
        return self.code.partition("/")[0]

    def as_dict(self) -> dict[str, str | None]:
        return {
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
            "url": self.url,
            "where": self.where,
        }


_REGISTRY: dict[str, FindingType] = {}
_STAGES = frozenset(Stage)


@dataclass(frozen=True, slots=True)
class FindingType:
    """One finding code, its severity and what it means to a repository manager."""

    code: str
    severity: Severity
    explanation: str

    def __post_init__(self) -> None:
        stage, slash, _ = self.code.partition("/")
        if not slash or stage not in _STAGES:
            raise ValueError(f"finding code {self.code} names no known stage ({', '.join(Stage)})")
        known = _REGISTRY.get(self.code)
        if known is not None and known != self:
            raise ValueError(f"finding code {self.code} declared twice, differently")
        _REGISTRY[self.code] = self

    def at(self, url: str, message: str | None = None, where: str | None = None) -> Finding:
        return Finding(self.code, self.severity, message or self.explanation, url, where)


def catalogue() -> list[FindingType]:
    """Every declared finding type, sorted by code.

    Types register themselves when their module is imported, so every module
    of the package is imported first: a new module's codes are listed without
    being named anywhere (`__main__` is skipped, since importing it runs the CLI). A
    module that needs an extra not installed (Playwright's, `adapter.render.browser`) is
    skipped too: such modules declare no codes, theirs sit in extra-free modules beside.
    """
    for module in pkgutil.walk_packages(adapter.__path__, "adapter."):
        if module.name.endswith(".__main__"):
            continue
        try:
            importlib.import_module(module.name)
        except ModuleNotFoundError as exc:
            if (exc.name or "adapter").startswith("adapter"):
                raise
    return sorted(_REGISTRY.values(), key=lambda t: t.code)


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity is Severity.ERROR for f in findings)

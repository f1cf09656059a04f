"""The typed, frozen settings a configuration file is validated into.

Pydantic lives at this one boundary: the YAML (or `quick_node`) goes in, frozen
models with every meaning checked come out (cron parses, patterns compile, URLs
are absolute http(s), ids are `urn:node:...`, rates are positive; the checked
value types are in `adapter.config.types`). Unknown keys are errors. Defaults
sit beside each field; `config/full.yaml` documents them. Loading, `${VAR}`
secrets and error messages are in `adapter.config.load`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_type_hints
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    create_model,
    model_validator,
)

from adapter import USER_AGENT
from adapter.config.types import (
    CheckName,
    Crontab,
    Host,
    HttpUrl,
    NodeId,
    NonEmpty,
    PublicKeyFile,
    Regex,
    ShapesSource,
    TimeZone,
    non_empty,
)
from adapter.limits import ZERO_ALLOWED, Limits

CPU_PER_PAGE = 0.0045  # seconds of CPU per landing page, checked and written (BENCHMARKS.md)
DISCOVERIES_PER_CORE = 32  # default `parallel_discoveries`: a walk mostly waits on its host
CORE_SHARE = 0.75  # of each core, what side-by-side node runs may plan to use (`parallel_nodes`)
FROM_CORES = 0.5  # the nodes' checking must need this much of a core for a checking pool to pay
PAGES_PER_PROCESS = 300  # below this many due pages per process, starting one does not pay
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StartSettings(Settings):
    """Where a sync starts; at least one URL in all."""

    entry_urls: tuple[HttpUrl, ...] = ()  # repository pages whose robots.txt is read
    robots_urls: tuple[HttpUrl, ...] = ()  # robots.txt files whose Sitemap: lines are read
    sitemap_urls: tuple[HttpUrl, ...] = ()  # sitemaps or sitemap indexes
    sitegraph_urls: tuple[HttpUrl, ...] = ()  # JSON-LD documents of many Datasets, or catalogues

    @model_validator(mode="after")
    def _at_least_one(self) -> StartSettings:
        if not (self.entry_urls or self.robots_urls or self.sitemap_urls or self.sitegraph_urls):
            raise ValueError(
                "give at least one of entry_urls, robots_urls, sitemap_urls or sitegraph_urls"
            )
        return self

    def urls(self) -> tuple[str, ...]:
        """The URLs discovery walks to sitemaps (the sitegraphs are `sitegraph_urls`)."""
        return (*self.entry_urls, *self.robots_urls, *self.sitemap_urls)


class ScheduleSettings(Settings):
    """When a node is synced: a cron expression or an interval, exactly one."""

    cron: Crontab | None = None  # "m h dom mon dow"
    interval_minutes: Annotated[float, Field(gt=0)] | None = None
    jitter_seconds: Annotated[int, Field(ge=0)] = 0  # random delay to spread nodes
    misfire_grace_seconds: Annotated[int, Field(gt=0)] = 600  # late runs within this still run
    timezone: TimeZone = "UTC"  # for cron expressions

    @model_validator(mode="after")
    def _exactly_one(self) -> ScheduleSettings:
        if (self.cron is None) == (self.interval_minutes is None):
            raise ValueError("give exactly one of cron or interval_minutes")
        return self

    def describe(self) -> str:
        when = f"cron {self.cron!r} ({self.timezone})" if self.cron else None
        when = when or f"every {_minutes(self.interval_minutes or 0)}"
        return f"{when}, jitter {self.jitter_seconds} s" if self.jitter_seconds else when


def _minutes(minutes: float) -> str:
    for unit, size in (("day", 1440), ("h", 60)):
        if minutes >= size and (minutes / size).is_integer():
            count = int(minutes / size)
            return f"{count} {unit}s" if unit == "day" and count > 1 else f"{count} {unit}"
    return f"{minutes:g} min"


DAILY = ScheduleSettings(interval_minutes=1440)


class PolitenessSettings(Settings):
    """How hard a node's hosts are asked."""

    user_agent: NonEmpty = USER_AGENT
    requests_per_second: Annotated[float, Field(gt=0)] = 2.0  # per host
    concurrency: Annotated[int, Field(ge=1, le=64)] = 2  # requests in flight per host
    honour_crawl_delay: bool = True  # robots.txt Crawl-delay slows the rate further


class ScopeSettings(Settings):
    """Which discovered URLs belong to the node.

    Hosts: a page on another host than its sitemap's is taken only when that
    host's robots.txt lists the sitemap (sitemaps.org cross-submission) or the
    host is in `allowed_hosts` (checked by discovery). Patterns: regular
    expressions searched anywhere in the URL (`allows`).
    """

    include: tuple[Regex, ...] = ()  # when given, a URL must match one of them
    exclude: tuple[Regex, ...] = ()  # a URL matching any of them is skipped
    allowed_hosts: tuple[Host, ...] = ()  # hosts accepted without cross-submission proof

    @cached_property
    def include_patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p) for p in self.include)

    @cached_property
    def exclude_patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p) for p in self.exclude)

    def allows(self, url: str) -> bool:
        """Whether a discovered URL passes the include and exclude patterns."""
        if self.include_patterns and not any(p.search(url) for p in self.include_patterns):
            return False
        return not any(p.search(url) for p in self.exclude_patterns)


Profile = Literal["dataone", "soso", "mnlite", "custom"]
IdentifierSchemes = Annotated[
    tuple[Literal["doi", "ark", "handle", "urn", "http"], ...], AfterValidator(non_empty)
]


class ChecksSettings(Settings):
    """The requirement profile that decides what is synced, and checks made blocking.

    `profile` names one of `adapter.dataone.profiles.PROFILES` (`dataone`, the default;
    `soso`, `mnlite`, `custom`). Each `required` entry is a requirement of
    `adapter.dataone.requirements.REQUIREMENTS` (`encoding`, `distribution`,
    `date-modified`, `id`) or a finding code or prefix with a slash
    (`signposting/cite-as` covers `signposting/cite-as-missing`, ...); it adds to any
    profile and is the `custom` profile's own list.
    """

    profile: Profile = "dataone"  # requirement profile deciding what is synced (see docs/check.md)
    identifier_schemes: IdentifierSchemes = ("doi",)  # profile custom: identifiers it accepts
    required: tuple[CheckName, ...] = ()
    shacl: ShapesSource | None = None  # SHACL onboarding view: "soso" (bundled) or a Turtle file
    # what DataONE search would show (dataone_index, dataone/index- findings) in the sync too:
    # several times normalize's CPU (benchmarks/dataone_index.py), so off unless asked, soso, or a
    # `required` entry under dataone/index (check-dataset and the check page always show it)
    dataone_index: bool = False

    @property
    def search_index(self) -> bool:
        """Whether the sync computes DataONE search's view of each Dataset."""
        wanted = any(name.startswith("dataone/index") for name in self.required)
        return self.dataone_index or self.profile == "soso" or wanted

    @model_validator(mode="after")
    def _schemes_for_custom(self) -> ChecksSettings:
        if self.identifier_schemes != ("doi",) and self.profile != "custom":
            raise ValueError(
                "identifier_schemes applies to profile: custom only "
                f"(the {self.profile} profile fixes its own identifiers)"
            )
        return self


class AccessRule(Settings):
    subject: NonEmpty  # "public", an ORCID, or a DataONE subject DN
    permissions: Annotated[
        tuple[Literal["read", "write", "changePermission"], ...], AfterValidator(non_empty)
    ]


class ReplicationSettings(Settings):
    allowed: bool = False  # replicationAllowed in system metadata
    number_replicas: Annotated[int, Field(ge=0)] = 0
    preferred: tuple[NodeId, ...] = ()  # preferredMemberNode
    blocked: tuple[NodeId, ...] = ()  # blockedMemberNode


PUBLIC_READ = (AccessRule(subject="public", permissions=("read",)),)


class DataOneSettings(Settings):
    """Values for system metadata and the Node document that no page carries."""

    submitter: NonEmpty
    rights_holder: NonEmpty
    contact_subject: NonEmpty
    access_policy: tuple[AccessRule, ...] = PUBLIC_READ
    replication: ReplicationSettings = ReplicationSettings()
    checksum_algorithm: Literal["MD5", "SHA-1"] = "MD5"
    sync_metadata_copy: bool = False  # also sync the encoding's metadata file as an object
    # a resource map (OAI-ORE package) per Dataset; false keeps a node moved from mnlite,
    # which published none, without new objects for its unchanged Datasets
    resource_maps: bool = True
    # how a Dataset's seriesId is formed: "doi" (doi:10.x/y, else the recognised identifier
    # in its series form), "mnlite" (the first identifier as published, as mnlite does) or
    # "mnlite-at-id" (the Dataset's @id, else that first identifier: mnlite's use_at_id)
    series_id_scheme: Literal["doi", "mnlite", "mnlite-at-id"] = "doi"
    base_url: HttpUrl | None = None  # public base URL of the served Member Node API
    # The Node document asks the CN to harvest this long after each cron sync starts
    # (set it above a sync's usual duration so the harvest does not overlap the sync).
    harvest_delay_minutes: Annotated[int, Field(ge=0, le=1440)] = 0


class SyncSettings(Settings):
    recheck_after_hours: Annotated[float, Field(gt=0)] = 168  # refetch unchanged pages after
    archive_after_missing_runs: Annotated[int, Field(ge=1)] = 3  # runs gone before archiving
    volatile_properties: tuple[NonEmpty, ...] = ()  # Dataset properties ignored for "changed"
    # runs (scheduled or `adapter sync`) only discover and mark pages due; workers check them
    enqueue_only: bool = False


class RenderingSettings(Settings):
    """Landing pages whose JSON-LD only JavaScript writes, rendered in a headless chromium
    (`adapter.render`; the `render` extra). Its caps (time, bytes, requests, heap) are
    limits: `render_budget`, `render_max_bytes`, `render_max_requests`, `render_heap_mb`."""

    mode: Literal["never", "auto", "always"] = "never"  # auto: the pages without a Dataset
    max_pages_at_once: Annotated[int, Field(ge=1, le=32)] = 4  # pages rendered at once
    # Debian's chromium headless shell; never Playwright's download
    browser: NonEmpty = "/usr/bin/chromium-headless-shell"


class NotifyOrigin(Settings):
    """A repository service that may announce this node's pages over COAR Notify."""

    id: HttpUrl  # the service's `origin.id` in its notifications
    inbox: HttpUrl  # its LDN inbox: where the answers go (`origin.inbox` must name it)


class NotifySettings(Settings):
    """COAR Notify for one node (`adapter serve`'s /inbox; docs/notify.md).

    `origins`: who may ask for (Request Ingest) or announce (Announce) the node's pages,
    each page on one of the node's hosts; nobody else is acted on. `report_to`: the
    repository's inbox, told when a page stops (or starts again) being harvestable.
    """

    origins: tuple[NotifyOrigin, ...] = ()  # who may ask for (or announce) the node's pages
    report_to: HttpUrl | None = None  # the repository's inbox for page status announcements
    per_origin_per_minute: Annotated[int, Field(ge=1, le=10_000)] = 60  # more: 429

    @property
    def enabled(self) -> bool:
        return bool(self.origins or self.report_to)


def _limits_model() -> type[BaseModel]:
    """A settings model with one optional, positive field per `Limits` cap."""
    fields: dict[str, Any] = {}
    for name, kind in get_type_hints(Limits).items():
        if kind in (int, float):
            strict = kind is int
            cap = Field(strict=strict, ge=0) if name in ZERO_ALLOWED else Field(strict=strict, gt=0)
            fields[name] = (Annotated[kind, cap] | None, None)
    config = ConfigDict(frozen=True, extra="forbid")
    return create_model("LimitsSettings", __config__=config, **fields)


if TYPE_CHECKING:
    LimitsSettings = BaseModel
else:
    LimitsSettings = _limits_model()


class NodeSettings(Settings):
    """One member node: where to start, when, how politely, and its DataONE values."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    id: NodeId
    name: NonEmpty
    description: str = ""
    start: StartSettings
    schedule: ScheduleSettings = DAILY
    politeness: PolitenessSettings = PolitenessSettings()
    scope: ScopeSettings = ScopeSettings()
    limit_overrides: LimitsSettings = Field(default_factory=LimitsSettings, alias="limits")
    checks: ChecksSettings = ChecksSettings()
    dataone: DataOneSettings
    sync: SyncSettings = SyncSettings()
    rendering: RenderingSettings = RenderingSettings()
    notify: NotifySettings = NotifySettings()

    @property
    def short_name(self) -> str:
        return self.id.removeprefix("urn:node:")

    def limits(self) -> Limits:
        """The node's caps: its `limits:` over the defaults and ADAPTER_LIMITS (read now)."""
        overrides = self.limit_overrides.model_dump(exclude_none=True)
        return Limits.from_env().with_overrides(overrides)

    def trusted_origins(self) -> tuple[str, ...]:
        """URLs the operator named: may resolve to non-public addresses (fetch.AddressPolicy)."""
        return (*self.start.urls(), *self.start.sitegraph_urls)

    def hosts(self) -> frozenset[str]:
        """The node's host names (lower case): its start URLs' and its allowed hosts'."""
        named = [urlsplit(u).hostname or "" for u in self.start.urls()]
        allowed = [h.rsplit(":", 1)[0] for h in self.scope.allowed_hosts]
        return frozenset(h.lower() for h in (*named, *allowed) if h)

    def in_scope(self, url: str) -> bool:
        """Whether a discovered landing page passes the node's include/exclude patterns."""
        return self.scope.allows(url)


class AuthSettings(Settings):
    """Whom the Member Node API trusts (`adapter serve`): DataONE tokens and node subjects.

    Without `cn_certificate` no token is verified and every caller is anonymous:
    objects whose access policy gives no public read are then served to nobody.
    """

    cn_certificate: PublicKeyFile | None = None  # PEM certificate or public key of the signing CN
    cn_subjects: tuple[NonEmpty, ...] = ()  # CN subjects: read all, see all logs, POST /error
    replication_subjects: tuple[NonEmpty, ...] = ()  # MN subjects that may call getReplica
    leeway_seconds: Annotated[int, Field(ge=0, le=600)] = 60  # clock skew allowed on exp and iat

    @model_validator(mode="after")
    def _subjects_need_a_certificate(self) -> AuthSettings:
        if (self.cn_subjects or self.replication_subjects) and self.cn_certificate is None:
            raise ValueError(
                "cn_subjects and replication_subjects are known only from verified tokens; "
                "give cn_certificate too"
            )
        return self


class AccessLogSettings(Settings):
    """What getLogRecords keeps (`adapter serve`): older entries are pruned as new ones arrive."""

    keep_days: Annotated[int, Field(ge=1, le=3650)] = 90  # entries older than this are deleted
    max_entries: Annotated[int, Field(ge=1000)] = 1_000_000  # per node; the oldest beyond go


class AdapterConfig(Settings):
    """A whole configuration file: the store, logging, and the nodes."""

    store_url: NonEmpty = "sqlite:///harvest.db"
    log_format: Literal["human", "json"] = "human"
    log_level: Literal[LOG_LEVELS] = "INFO"  # type: ignore[valid-type]
    nodes: tuple[NodeSettings, ...] = Field(min_length=1)
    # nodes synced at the same time (scheduler, `adapter sync --config`); default: as many
    # as the cores can check at the nodes' allowed rates (see nodes_at_once)
    parallel_nodes: Annotated[int, Field(ge=1, le=4096)] | None = None
    # of those, how many may discover (robots.txt, sitemaps) at the same time, a thread each;
    # the pages of them all are fetched by one loop; default: DISCOVERIES_PER_CORE a core
    parallel_discoveries: Annotated[int, Field(ge=1, le=4096)] | None = None
    # processes that check the pages of side-by-side nodes, one pool for them all; default:
    # as many cores as the nodes' rates keep busy; 0: checked in the threads that fetch
    check_processes: Annotated[int, Field(ge=0, le=256)] | None = None
    auth: AuthSettings = AuthSettings()  # DataONE tokens and trusted node subjects (serve)
    access_log: AccessLogSettings = AccessLogSettings()  # getLogRecords' retention (serve)
    # the operator's secret for /ops (`web`, `serve --ops`) to callers not on loopback;
    # ADAPTER_OPS_TOKEN in the environment is taken when this is not set
    ops_token: Annotated[
        Annotated[str, Field(min_length=16)] | None, BeforeValidator(lambda v: v or None)
    ] = None
    source: Path | None = None  # the file it was loaded from

    def nodes_at_once(self, cpus: int | None = None) -> int:
        """`parallel_nodes`, else a default from the machine and the nodes' rates.

        A node run mostly waits on its hosts' pace, so its cost is its allowed
        rate times a page's CPU: as many nodes run at once as CORE_SHARE of the
        cores can check at their mean allowed rate (every node, when they fit;
        333 at 1 request/s on 2 cores). Nodes beyond that wait their turn, so
        no run is slowed below its rate by the CPU others take.
        """
        if self.parallel_nodes:
            return self.parallel_nodes
        cores = cpus or os.cpu_count() or 1
        mean_rate = sum(n.politeness.requests_per_second for n in self.nodes) / len(self.nodes)
        fits = int(cores * CORE_SHARE / (CPU_PER_PAGE * mean_rate))
        return max(1, min(len(self.nodes), max(2 * cores, fits)))

    def discoveries_at_once(self, cpus: int | None = None) -> int:
        """`parallel_discoveries`, else DISCOVERIES_PER_CORE a core; never above
        `nodes_at_once`. A discovery holds a thread for its whole walk of the sitemaps,
        about 40 KB with its stacks: at 200 nodes side by side, 8 MB for the walks alone."""
        cores = cpus or os.cpu_count() or 1
        wanted = self.parallel_discoveries or DISCOVERIES_PER_CORE * cores
        return max(1, min(wanted, self.nodes_at_once(cores)))

    @model_validator(mode="after")
    def _unique_ids(self) -> AdapterConfig:
        seen: set[str] = set()
        for node in self.nodes:
            if node.id in seen:
                raise ValueError(f"node id {node.id} is used by more than one node")
            seen.add(node.id)
        return self

    def node(self, node_id: str) -> NodeSettings:
        for node in self.nodes:
            if node_id in (node.id, node.short_name):
                return node
        raise KeyError(node_id)


def known_keys(model: type[BaseModel]) -> list[str]:
    """The keys a YAML mapping for `model` may hold (aliases where given)."""
    return sorted(f.alias or name for name, f in model.model_fields.items() if name != "source")


def field_model(model: type[BaseModel], key: str) -> type[BaseModel] | None:
    """The settings model behind `key` of `model` (through tuples), if any."""
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return _model_in(info.annotation)
    return None


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def pool_size(config: AdapterConfig, nodes: Sequence[NodeSettings], cpus: int | None = None) -> int:
    """Checking processes for these nodes side by side: `check_processes`, else as many
    cores as the nodes' allowed rates keep busy (none below half a core, or on one core)."""
    if config.check_processes is not None:
        return config.check_processes
    cores = cpus or os.cpu_count() or 1
    at_once = sorted((n.politeness.requests_per_second for n in nodes), reverse=True)
    demand = sum(at_once[: config.nodes_at_once(cores)]) * CPU_PER_PAGE  # cores' worth
    if cores < 2 or len(nodes) < 2 or demand < FROM_CORES:
        return 0
    return min(cores, math.ceil(demand))


def choose_processes(node: NodeSettings, due: int, cpus: int | None = None) -> int:
    """Checking processes for one node's `due` pages: as many cores as its rate can feed
    (1: none, check in the page threads)."""
    cpus = cpus or os.cpu_count() or 1
    feedable = math.ceil(node.politeness.requests_per_second * CPU_PER_PAGE)
    return max(1, min(cpus, feedable, due // PAGES_PER_PROCESS))

"""The indexer's schema.org fields as SPARQL over the prepared Dataset (rdflib).

One `Field` per Solr field that DataONE's indexer fills from a
`science-on-schema.org/Dataset;ld+json` object (its schema.org configuration:
`application-context-schema-org.xml`, the field list of its JSON-LD
subprocessor), written here from the rules that configuration states:

- `title`, `label`, `pubDate`, `licenseUrl`, `licenseName`, `abstract` and
  `serviceEndpoint` leave out a Dataset that another Dataset lists in `hasPart`;
  the other fields read every Dataset of the document, as the indexer does;
- `author`, `authorGivenName` are the first creator (in list order) that has a
  `name` / `givenName`; `origin` every creator's `name`, `authorLastName` and
  `investigator` every creator's `familyName`, in list order;
- the bounding box is a `spatialCoverage` Place's GeoShape `box`, split on
  spaces and commas as "south west north east";
- `beginDate` / `endDate` split `temporalCoverage` at its first "/";
- `namedLocation` is a `spatialCoverage` that is not a Place, as it is.

The indexer uses Jena: where rdflib's SPARQL differs, the queries say so. Jena
gives no `str()` of a blank node (rdflib does), so those are filtered out; its
`list:index` is the `POSITION` triple `prepare.annotate_lists` writes. Where the
indexer takes one value (`LIMIT 1`) of several in no stated order, the queries
order them (the top-level Dataset first, then by value) so a report is stable.
The Solr `text` field (every string of the document run together) and the
creator-role fields of newer indexer releases are not computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Converter = Literal["date", "latitude", "longitude"]

PREFIXES = """
PREFIX rdf:  <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX xsd:  <http://www.w3.org/2001/XMLSchema#>
PREFIX SO:   <http://schema.org/>
PREFIX PROV: <http://www.w3.org/ns/prov#>
PREFIX IDX:  <urn:adapter:dataone-index:>
"""
PROV = "http://www.w3.org/ns/prov#"
PROVONE_DATA = "http://purl.dataone.org/provone/2015/01/15/ontology#Data"

# a Dataset that no other Dataset lists in hasPart
TOP = "FILTER NOT EXISTS { ?other SO:hasPart ?ds . }"
# the members of an ordered property's list, with their positions (Jena's list:index)
MEMBERS = "?list rdf:rest* ?cell . ?cell IDX:position ?pos ; rdf:first ?member ."
SUB = "BIND(EXISTS { ?other SO:hasPart ?ds . } AS ?sub)"
BOX = """
    ?ds SO:spatialCoverage ?spatial . ?spatial rdf:type SO:Place ; SO:geo ?geo .
    ?geo rdf:type SO:GeoShape ; SO:box ?box .
    BIND(REPLACE(STR(?box), "\\\\s*,\\\\s*|\\\\s{2,}", " ") AS ?flat)
    BIND(STRBEFORE(?flat, " ") AS ?south)
    BIND(STRAFTER(?flat, " ") AS ?rest)
    BIND(STRBEFORE(?rest, " ") AS ?west)
    BIND(STRAFTER(?rest, " ") AS ?rest2)
    BIND(STRBEFORE(?rest2, " ") AS ?north)
    BIND(STRAFTER(?rest2, " ") AS ?east)
"""
BOX_ORDER = "?sub ?box"  # the four coordinates come from one box
BOX_ALSO = ("spatialCoverage", "geo")  # what a box needs besides `box`


@dataclass(frozen=True, slots=True)
class Field:
    """One Solr field: its query selects `?value`; `many` when the index keeps every value."""

    name: str
    where: str  # the WHERE body; ?ds is a Dataset
    many: bool = False
    order: str = "?sub ?value"  # ORDER BY for a stable pick; ?sub is bound by `SUB`
    converter: Converter | None = None
    distinct: bool = False  # SELECT DISTINCT ?value ?sub
    # the query can match only if the graph has one of these predicates (schema.org terms or
    # full IRIs); none there, it is not run: most pages lack most of them
    needs: tuple[str, ...] = ()
    # and each of these: a predicate of a triple pattern every solution of the query matches
    # (a plain creator has a `name`, seldom a `givenName` or `familyName`)
    also: tuple[str, ...] = ()

    @property
    def sparql(self) -> str:
        """The field's whole query, as the indexer's rules read (and as a test runs it)."""
        limit = "" if self.many else "LIMIT 1"
        select = "DISTINCT ?value ?sub" if self.distinct else "?value"
        return (
            f"{PREFIXES}SELECT {select} WHERE {{ ?ds rdf:type SO:Dataset . "
            f"{self.where} {SUB} FILTER(BOUND(?value)) }} ORDER BY {self.order} {limit}"
        )

    @property
    def top(self) -> bool:
        """Whether the query leaves out a Dataset another one lists in `hasPart` (`TOP`)."""
        return TOP in self.where

    @property
    def keys(self) -> tuple[str, ...]:
        """The ORDER BY variables, without their `?`."""
        return tuple(v.removeprefix("?") for v in self.order.split())

    @property
    def text(self) -> str:
        """The part of `sparql` rdflib runs: the pattern's solutions with ?value, ?ds and the
        ordering variables, in rdflib's order of evaluation. The rest (the group's filters
        `TOP` and BOUND(?value), ?sub, ORDER BY, DISTINCT, LIMIT) `compute` applies to the
        rows as rdflib's evaluator does; rdflib's own EXISTS, FILTER and ORDER BY were two
        thirds of a query's CPU."""
        extra = "".join(f" ?{k}" for k in self.keys if k not in ("value", "ds", "sub"))
        return (
            f"{PREFIXES}SELECT ?value ?ds{extra} WHERE {{ ?ds rdf:type SO:Dataset . "
            f"{self.where.replace(TOP, '')} }}"
        )


FIELDS: tuple[Field, ...] = (
    Field(
        "abstract",
        f"?ds SO:description ?list . {MEMBERS} FILTER(!isBlank(?member)) "
        f"BIND(STR(?member) AS ?value) {TOP}",
        order="?pos ?value",
        needs=("description",),
    ),
    Field("title", f"?ds SO:name ?value . {TOP}", needs=("name",)),
    Field("label", f"?ds SO:alternateName ?value . {TOP}", needs=("alternateName",)),
    Field(
        "awardNumber",
        """{ ?award rdf:type SO:MonetaryGrant ; SO:fundedItem ?ds ; SO:identifier ?id . }
           UNION { ?ds SO:about ?award . ?award rdf:type SO:MonetaryGrant ; SO:sameAs ?id . }
           FILTER(!isBlank(?id)) BIND(STR(?id) AS ?value)""",
        many=True,
        needs=("fundedItem", "about"),
    ),
    Field(
        "awardTitle",
        """{ ?award rdf:type SO:MonetaryGrant ; SO:fundedItem ?ds ; SO:name ?n . }
           UNION { ?ds SO:about ?award . ?award rdf:type SO:MonetaryGrant ; SO:name ?n . }
           FILTER(!isBlank(?n)) BIND(STR(?n) AS ?value)""",
        many=True,
        needs=("fundedItem", "about"),
    ),
    Field(
        "author",
        f"?ds SO:creator ?list . {MEMBERS} ?member SO:name ?value .",
        order="?pos ?sub ?value",
        needs=("creator",),
        also=("name",),
    ),
    Field(
        "pubDate",
        f"?ds SO:datePublished ?d . FILTER(!isBlank(?d)) BIND(STR(?d) AS ?value) {TOP}",
        many=True,
        converter="date",
        needs=("datePublished",),
    ),
    Field(
        "authorGivenName",
        f"?ds SO:creator ?list . {MEMBERS} ?member SO:givenName ?value .",
        order="?pos ?sub ?value",
        needs=("creator",),
        also=("givenName",),
    ),
    Field(
        "authorLastName",
        f"?ds SO:creator ?list . {MEMBERS} ?member SO:familyName ?value .",
        many=True,
        order="?sub ?pos ?value",
        needs=("creator",),
        also=("familyName",),
    ),
    Field(
        "funderIdentifier",
        "?ds SO:funder ?f . ?f SO:identifier ?value .",
        many=True,
        needs=("funder",),
        also=("identifier",),
    ),
    Field(
        "funderName",
        "?ds SO:funder ?f . ?f SO:name ?value .",
        many=True,
        needs=("funder",),
        also=("name",),
    ),
    Field(
        "origin",
        f"?ds SO:creator ?list . {MEMBERS} ?member SO:name ?value .",
        many=True,
        order="?sub ?pos ?value",
        needs=("creator",),
        also=("name",),
    ),
    Field(
        "hasPart",
        """{ ?ds SO:hasPart ?node . ?node rdf:type SO:Dataset ; SO:name ?value . }
           UNION { ?ds SO:hasPart ?value . FILTER NOT EXISTS { ?value rdf:type SO:Dataset . } }""",
        many=True,
        needs=("hasPart",),
    ),
    Field("keywords", "?ds SO:keywords ?value .", many=True, needs=("keywords",)),
    Field(
        "licenseUrl",
        f"""{TOP}
           {{ ?ds SO:license ?license . FILTER(!isBlank(?license)) BIND(STR(?license) AS ?value) }}
           UNION {{ ?ds SO:license ?license . ?license SO:license ?value . }}""",
        many=True,
        needs=("license",),
    ),
    Field(
        "licenseName",
        f"""{TOP}
           {{ ?ds SO:license ?license . FILTER(!isBlank(?license)) BIND(STR(?license) AS ?value) }}
           UNION {{ ?ds SO:license ?license . ?license SO:name ?value . }}""",
        many=True,
        needs=("license",),
    ),
    Field(
        "southBoundCoord",
        f"{BOX} BIND(?south AS ?value)",
        converter="latitude",
        order=BOX_ORDER,
        needs=("box",),
        also=BOX_ALSO,
    ),
    Field(
        "westBoundCoord",
        f"{BOX} BIND(?west AS ?value)",
        converter="longitude",
        order=BOX_ORDER,
        needs=("box",),
        also=BOX_ALSO,
    ),
    Field(
        "northBoundCoord",
        f"{BOX} BIND(?north AS ?value)",
        converter="latitude",
        order=BOX_ORDER,
        needs=("box",),
        also=BOX_ALSO,
    ),
    Field(
        "eastBoundCoord",
        f"{BOX} BIND(?east AS ?value)",
        converter="longitude",
        order=BOX_ORDER,
        needs=("box",),
        also=BOX_ALSO,
    ),
    Field(
        "investigator",
        f"?ds SO:creator ?list . {MEMBERS} ?member SO:familyName ?value .",
        many=True,
        order="?sub ?pos ?value",
        needs=("creator",),
        also=("familyName",),
    ),
    Field(
        "prov_hasDerivations",
        "?ds PROV:hadDerivation ?d . FILTER(!isBlank(?d)) BIND(STR(?d) AS ?value)",
        many=True,
        needs=(PROV + "hadDerivation",),
    ),
    Field(
        "prov_instanceOfClass",
        f"{{ ?ds PROV:wasGeneratedBy ?e . }} UNION {{ ?ds PROV:wasUsedBy ?e . }} "
        f'BIND("{PROVONE_DATA}" AS ?value)',
        many=True,
        distinct=True,
        needs=(PROV + "wasGeneratedBy", PROV + "wasUsedBy"),
    ),
    Field(
        "prov_usedByExecution",
        "?ds PROV:wasUsedBy ?e . FILTER(!isBlank(?e)) BIND(STR(?e) AS ?value)",
        many=True,
        needs=(PROV + "wasUsedBy",),
    ),
    Field(
        "prov_usedByProgram",
        "?ds PROV:wasUsedBy ?e . ?e PROV:hadPlan ?p . FILTER(!isBlank(?p)) BIND(STR(?p) AS ?value)",
        many=True,
        needs=(PROV + "wasUsedBy",),
        also=(PROV + "hadPlan",),
    ),
    Field(
        "prov_wasDerivedFrom",
        "{ ?ds SO:isBasedOn ?d . } UNION { ?ds PROV:wasDerivedFrom ?d . } "
        "FILTER(!isBlank(?d)) BIND(STR(?d) AS ?value)",
        many=True,
        distinct=True,
        needs=("isBasedOn", PROV + "wasDerivedFrom"),
    ),
    Field(
        "prov_generatedByExecution",
        "?ds PROV:wasGeneratedBy ?e . FILTER(!isBlank(?e)) BIND(STR(?e) AS ?value)",
        many=True,
        needs=(PROV + "wasGeneratedBy",),
    ),
    Field(
        "prov_generatedByProgram",
        "?ds PROV:wasGeneratedBy ?e . ?e PROV:hadPlan ?p . FILTER(!isBlank(?p)) "
        "BIND(STR(?p) AS ?value)",
        many=True,
        needs=(PROV + "wasGeneratedBy",),
        also=(PROV + "hadPlan",),
    ),
    Field(
        "namedLocation",
        "?ds SO:spatialCoverage ?value . FILTER NOT EXISTS { ?value rdf:type SO:Place . }",
        many=True,
        needs=("spatialCoverage",),
    ),
    Field(
        "beginDate",
        '?ds SO:temporalCoverage ?dates . BIND(IF(CONTAINS(?dates, "/"), '
        'STRBEFORE(?dates, "/"), ?dates) AS ?value)',
        converter="date",
        order="?sub ?dates",
        needs=("temporalCoverage",),
    ),
    Field(
        "endDate",
        '?ds SO:temporalCoverage ?dates . BIND(IF(CONTAINS(?dates, "/"), '
        'STRAFTER(?dates, "/"), "") AS ?value)',
        converter="date",
        order="?sub ?dates",
        needs=("temporalCoverage",),
    ),
    Field(
        "parameter",
        """{ ?ds SO:variableMeasured ?v . ?v rdf:type SO:PropertyValue ; SO:name ?value . }
           UNION { ?ds SO:variableMeasured ?value .
                   FILTER NOT EXISTS { ?any rdf:type SO:PropertyValue . } }""",
        many=True,
        needs=("variableMeasured",),
    ),
    Field(
        "edition",
        "?ds SO:version ?v . FILTER(!isBlank(?v)) BIND(STR(?v) AS ?value)",
        needs=("version",),
    ),
    Field(
        "serviceEndpoint",
        f"""{{ ?ds SO:url ?u . }}
           UNION {{ ?ds SO:distribution ?dist . ?dist rdf:type SO:DataDownload ;
                    SO:contentUrl ?u . }}
           {TOP} FILTER(!isBlank(?u)) BIND(STR(?u) AS ?value)""",
        many=True,
        needs=("url", "distribution"),
    ),
)

"""Golden tests for extract + normalize over fixtures/pages, plus the normalizer's own rules.

Each `fixtures/pages/<case>.html` (or `.jsonld`, served as application/ld+json)
has a `<case>.expected.json`: the blocks read, the finding codes (with severity
and where), and every framed Dataset. The tests only compare. To regenerate the
goldens deliberately after a reviewed change, run

    .venv/bin/python -m tests.jsonld.test_normalize --regen

and review the diff (`git diff fixtures/pages`) before committing.
"""

from __future__ import annotations

import copy
import json
import socket
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyld import jsonld

from adapter.jsonld.frame import FAST_PATH, embedded_size, frame_expanded, frame_with_pyld
from adapter.jsonld.framed import literal, node_id, types, values
from adapter.jsonld.loader import SCHEMA_ORG_CONTEXT_URLS, RemoteContextRefused, load_document
from adapter.jsonld.normalize import NormalizedDataset, _expand, normalize
from adapter.limits import Limits
from adapter.page.extract import JsonLdBlock, extract
from adapter.page.findings import JS_RENDERED

PAGES = Path(__file__).resolve().parents[2] / "fixtures" / "pages"
CONTENT_TYPES = {".html": "text/html", ".jsonld": "application/ld+json"}


def _cases() -> list[Path]:
    return sorted(p for p in PAGES.iterdir() if p.suffix in CONTENT_TYPES)


def run_case(page: Path) -> dict[str, Any]:
    """What the extract and normalize stages make of one fixture page."""
    url = f"https://repo.example/dataset/{page.stem}"
    extraction = extract(
        page.read_bytes(), url=url, content_type=CONTENT_TYPES[page.suffix], charset=None
    )
    datasets, findings = normalize(extraction.blocks, base_url=extraction.base_url or url)
    return {
        "url": url,
        "js_rendered": any(f.code == JS_RENDERED.code for f in extraction.findings),
        "blocks": [
            {"index": b.index, "syntax": b.syntax, "repairs": list(b.repairs)}
            for b in extraction.blocks
        ],
        "findings": [
            {"code": f.code, "severity": str(f.severity), "where": f.where}
            for f in extraction.findings + findings
        ],
        "datasets": [
            {"id": d.id, "block_index": d.block_index, "where": d.where, "framed": d.framed}
            for d in datasets
        ],
    }


def _expected_path(page: Path) -> Path:
    return page.with_name(page.stem + ".expected.json")


@pytest.mark.parametrize("page", _cases(), ids=lambda p: p.name)
def test_golden(page: Path) -> None:
    expected_file = _expected_path(page)
    assert expected_file.exists(), f"no golden for {page.name}; see the module docstring"
    expected = json.loads(expected_file.read_text("utf-8"))
    assert run_case(page) == expected


def test_goldens_hold_when_pages_are_normalized_on_several_threads() -> None:
    pages = _cases() * 3
    expected = {p: json.loads(_expected_path(p).read_text("utf-8")) for p in _cases()}
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run_case, pages))
    assert [r == expected[p] for r, p in zip(results, pages, strict=True)] == [True] * len(pages)


def test_there_are_enough_golden_cases() -> None:
    assert len(_cases()) >= 15


@pytest.mark.parametrize("page", _cases(), ids=lambda p: p.name)
def test_fast_framing_equals_pyld_frame(page: Path) -> None:
    """The no-re-expansion path (pyld internals) must give what jsonld.frame gives."""
    assert FAST_PATH, "pyld changed its internals: adapter.jsonld.frame falls back to jsonld.frame"
    url = f"https://repo.example/dataset/{page.stem}"
    extraction = extract(
        page.read_bytes(), url=url, content_type=CONTENT_TYPES[page.suffix], charset=None
    )
    for one in extraction.blocks:
        expanded = _expand(one, url, url, [])
        if expanded is None or embedded_size(expanded, 20_000) > 20_000:
            continue  # normalize never frames these
        before = copy.deepcopy(expanded)
        assert frame_expanded(expanded) == frame_with_pyld(before)
        assert expanded == before  # the input is not modified


URL = "https://repo.example/dataset/x"


def block(data: Any, index: int = 1) -> JsonLdBlock:
    return JsonLdBlock(index, data, "json-ld")


def run(*data: Any) -> tuple[list[NormalizedDataset], list[str]]:
    datasets, findings = normalize([block(d, i) for i, d in enumerate(data, 1)], base_url=URL)
    return datasets, [f.code for f in findings]


@pytest.mark.parametrize("url", sorted(SCHEMA_ORG_CONTEXT_URLS))
def test_every_schema_org_spelling_is_answered_offline_and_tagged_static(url: str) -> None:
    document = load_document(url)
    assert document["tag"] == "static"
    assert document["document"]["@context"]["@vocab"] == "http://schema.org/"
    datasets, found = run({"@context": url, "@type": "Dataset", "url": "/a"})
    assert found == []
    assert datasets[0].framed["url"] == "https://repo.example/a"


def test_other_contexts_are_refused_by_the_loader() -> None:
    with pytest.raises(RemoteContextRefused):
        load_document("https://w3id.org/ro/crate/1.1/context")


def test_the_processed_context_is_cached_by_pyld() -> None:
    run({"@context": "https://schema.org/", "@type": "Dataset"})

    def refuse(url: str, options: Any = None) -> Any:
        raise AssertionError(f"loader called for {url}")

    expanded = jsonld.expand(
        {"@context": "https://schema.org/", "name": "n"}, {"documentLoader": refuse}
    )
    assert expanded == [{"http://schema.org/name": [{"@value": "n"}]}]


def test_a_remote_context_that_would_never_answer_is_never_contacted() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.setblocking(False)
        context = f"http://127.0.0.1:{server.getsockname()[1]}/context.jsonld"
        datasets, found = run({"@context": context, "@type": "Dataset", "name": "n"})
        with pytest.raises(BlockingIOError):
            server.accept()
    assert datasets == []
    assert found == ["normalize/remote-context", "normalize/no-dataset"]


def test_https_namespace_is_unified_with_an_info_finding() -> None:
    datasets, found = run(
        {"@context": {"@vocab": "https://schema.org/"}, "@type": "Dataset", "name": "n"}
    )
    # the namespace is info; the Dataset type itself is a warning (DataONE's mnlite drops it)
    assert found == ["normalize/https-namespace", "normalize/https-dataset-type"]
    assert types(datasets[0].framed) == ["Dataset"]
    assert datasets[0].framed["name"] == "n"


def test_an_http_dataset_type_in_an_https_block_is_no_warning() -> None:
    _, found = run(
        {
            "@context": {"@vocab": "https://schema.org/"},
            "@type": "http://schema.org/Dataset",
            "name": "n",
        }
    )
    assert found == ["normalize/https-namespace"]


def test_full_iri_types_and_type_arrays() -> None:
    datasets, found = run(
        {"@context": "http://schema.org/", "@type": ["schema:Dataset", "CreativeWork"]},
        {"@type": "https://schema.org/Dataset", "@id": "https://doi.org/10.1/z"},
    )
    assert found == [  # the second block's terms are all IRIs: it needs no @context
        "normalize/https-namespace",
        "normalize/https-dataset-type",
    ]
    assert [d.id for d in datasets] == [None, "https://doi.org/10.1/z"]
    assert types(datasets[0].framed) == ["Dataset", "CreativeWork"]


def test_original_is_the_block_or_the_node_with_its_context() -> None:
    alone = {"@context": "https://schema.org/", "@type": "Dataset", "@id": "a"}
    graph: dict[str, Any] = {
        "@context": "https://schema.org/",
        "@graph": [{"@type": "Person", "@id": "p"}, {"@type": "Dataset", "@id": "b"}],
    }
    datasets, _ = run(alone, graph)
    assert datasets[0].original is alone
    assert datasets[0].where == "block 1 $"
    assert datasets[1].original == {"@context": "https://schema.org/", **graph["@graph"][1]}
    assert (datasets[1].where, datasets[1].id) == (
        "block 2 $['@graph'][1]",
        "https://repo.example/dataset/b",
    )


def test_literal_shapes_in_the_framed_dataset() -> None:
    datasets, _ = run(
        {
            "@context": "https://schema.org/",
            "@type": "Dataset",
            "dateModified": {"@value": "2024-01-02", "@type": "Date"},
            "name": {"@value": "Nom", "@language": "fr"},
            "sameAs": {"@id": "https://x.example/1"},
            "distribution": {"@type": "DataDownload", "contentUrl": {"@id": "f.csv"}},
        }
    )
    framed = datasets[0].framed
    assert framed["dateModified"] == "2024-01-02"
    assert framed["name"] == {"@value": "Nom", "@language": "fr"}
    assert literal(framed["name"]) == "Nom"
    assert framed["sameAs"] == "https://x.example/1"
    assert framed["distribution"]["contentUrl"] == "https://repo.example/dataset/f.csv"
    assert "@id" not in framed["distribution"]  # blank-node labels are pruned


def test_iri_properties_are_absolute_even_as_literals() -> None:
    datasets, _ = run(
        {
            "@context": {"@vocab": "http://schema.org/"},
            "@type": "Dataset",
            "url": " ../landing/x ",
            "sameAs": ["doi:10.5072/x", {"@value": "#anchor"}],
        }
    )
    framed = datasets[0].framed
    assert framed["url"] == "https://repo.example/landing/x"
    assert framed["sameAs"] == ["doi:10.5072/x", "https://repo.example/dataset/x#anchor"]


def test_invalid_json_ld_is_a_finding() -> None:
    datasets, found = run({"@context": 5, "@type": "Dataset"})
    assert datasets == []
    assert found == ["normalize/invalid-jsonld", "normalize/no-dataset"]


def test_no_dataset_names_what_was_found_and_the_fix() -> None:
    _, findings = normalize(
        [block({"@context": {"@vocab": "http://schema.org"}, "@type": "Dataset"})], base_url=URL
    )
    assert "trailing slash" in findings[0].message
    _, findings = normalize(
        [block({"@context": "https://schema.org/", "@type": ["dataset", "WebPage"]})], base_url=URL
    )
    assert "case-sensitive" in findings[0].message
    assert "http://schema.org/WebPage" in findings[0].message


def test_framing_that_would_embed_too_much_is_refused_before_pyld_runs() -> None:
    graph = [{"@id": "d", "@type": "Dataset", "about": {"@id": "n0"}}] + [
        {"@id": f"n{i}", "a": {"@id": f"n{i + 1}"}, "b": {"@id": f"n{i + 1}"}} for i in range(40)
    ]  # framed with @embed @always this is 2**40 nodes
    datasets, found = run({"@context": "https://schema.org/", "@graph": graph})
    assert datasets == []
    assert found == ["normalize/embedding-too-large", "normalize/dataset-over-limit"]
    small = {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "keywords": list("abcdefghijkl"),
    }
    _, findings = normalize([block(small)], base_url=URL, limits=Limits(max_json_nodes=10))
    assert [f.code for f in findings] == [
        "normalize/embedding-too-large",
        "normalize/dataset-over-limit",
    ]


def test_accessors() -> None:
    node = {
        "@type": ["Dataset", "http://example.org/T"],
        "creator": {"@list": [{"@id": "https://orcid.org/1"}, {"name": "B"}]},
        "keywords": ["a", {"@value": "b"}],
        "version": 2,
    }
    assert types(node) == ["Dataset", "http://example.org/T"]
    assert [node_id(v) for v in values(node, "creator")] == ["https://orcid.org/1", None]
    assert [literal(v) for v in values(node, "keywords")] == ["a", "b"]
    assert values(node, "missing") == []
    assert literal(node["version"]) == "2"
    assert literal({"@id": "x"}) is None
    assert node_id("https://x.example/") == "https://x.example/"


CDIF = {"@vocab": "http://schema.org/", "dcat": "http://www.w3.org/ns/dcat#"}
PAGE_ID = "https://repo.example/dataset/x"
RECORD_ID = "https://repo.example/record/x"


def cdif_page(additional_type: Any, context: Any = CDIF) -> dict[str, Any]:
    return {
        "@context": context,
        "@type": "Dataset",
        "@id": PAGE_ID,
        "name": "Cores",
        "subjectOf": {
            "@id": RECORD_ID,
            "@type": "Dataset",
            "additionalType": additional_type,
            "about": {"@id": PAGE_ID},
            "sdDatePublished": "2024-02-01",
        },
    }


@pytest.mark.parametrize(
    "spelling",
    [
        "dcat:CatalogRecord",
        ["dcat:CatalogRecord"],
        "http://www.w3.org/ns/dcat#CatalogRecord",
        {"@id": "http://www.w3.org/ns/dcat#CatalogRecord"},
        {"@id": "dcat:CatalogRecord"},
    ],
    ids=str,
)
def test_a_cdif_catalog_record_is_not_a_second_dataset(spelling: Any) -> None:
    datasets, codes = run(cdif_page(spelling))
    assert [d.id for d in datasets] == [PAGE_ID]
    assert codes == ["normalize/embedded-dataset"]
    record = datasets[0].framed["subjectOf"]  # kept embedded where the publisher put it
    assert record["@id"] == RECORD_ID and types(record) == ["Dataset"]
    assert node_id(record["about"]) == PAGE_ID


def test_a_catalog_record_under_the_schema_org_context_is_an_iri() -> None:
    # schema.org's context makes additionalType an IRI: dcat:CatalogRecord expands with the prefix
    context = ["https://schema.org/", {"dcat": "http://www.w3.org/ns/dcat#"}]
    datasets, codes = run(cdif_page("dcat:CatalogRecord", context))
    assert [d.id for d in datasets] == [PAGE_ID]
    assert "normalize/embedded-dataset" in codes


def test_the_finding_names_the_record_and_its_dataset() -> None:
    _, findings = normalize([block(cdif_page("dcat:CatalogRecord"))], base_url=URL)
    (finding,) = [f for f in findings if f.code == "normalize/embedded-dataset"]
    assert RECORD_ID in finding.message and PAGE_ID in finding.message
    assert finding.where == "block 1"


def test_a_record_at_the_top_with_the_dataset_in_about_gives_the_dataset() -> None:
    page = {
        "@context": CDIF,
        "@type": "Dataset",
        "@id": RECORD_ID,
        "additionalType": "dcat:CatalogRecord",
        "about": {"@type": "Dataset", "@id": PAGE_ID, "name": "Cores"},
    }
    datasets, codes = run(page)
    assert [(d.id, d.where) for d in datasets] == [(PAGE_ID, "block 1 $['about']")]
    assert codes == ["normalize/embedded-dataset"]


def test_a_dataset_given_only_as_subject_of_belongs_to_its_dataset() -> None:
    page = {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "name": "Cores",
        "subjectOf": {"@type": "Dataset", "name": "Metadata record", "encodingFormat": "x"},
    }
    datasets, codes = run(page)
    assert [literal(d.framed["name"]) for d in datasets] == ["Cores"]
    assert datasets[0].where == "block 1 $"
    assert codes == ["normalize/embedded-dataset"]


def test_a_dataset_written_on_its_own_stays_even_when_another_names_it() -> None:
    graph = {
        "@context": "https://schema.org/",
        "@graph": [
            {
                "@type": "Dataset",
                "@id": "https://repo.example/d/1",
                "name": "One",
                "subjectOf": {"@id": "https://repo.example/d/2"},
            },
            {"@type": "Dataset", "@id": "https://repo.example/d/2", "name": "Two"},
        ],
    }
    datasets, codes = run(graph)
    assert sorted(d.id or "" for d in datasets) == [
        "https://repo.example/d/1",
        "https://repo.example/d/2",
    ]
    assert "normalize/embedded-dataset" not in codes


def test_records_about_each_other_keep_one_dataset() -> None:
    page = cdif_page("dcat:CatalogRecord")
    page["additionalType"] = "dcat:CatalogRecord"  # both claim to be the record
    page["about"] = {"@id": RECORD_ID}
    datasets, _ = run(page)
    assert [d.id for d in datasets] == [PAGE_ID]  # the one the publisher wrote at the top


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from(["Dataset", "", "a", "_:b", "#x", "dcat:CatalogRecord"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "@id",
                    "@type",
                    "@graph",
                    "@value",
                    "@list",
                    "name",
                    "url",
                    "@context",
                    "subjectOf",
                    "about",
                    "additionalType",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(_JSON)
def test_any_json_gives_datasets_or_findings(data: Any) -> None:
    datasets, findings = normalize([block(data)], base_url=URL)
    assert all(f.code.startswith("normalize/") for f in findings)
    codes = {f.code for f in findings}
    assert datasets or "normalize/no-dataset" in codes
    assert datasets or "normalize/embedded-dataset" not in codes  # one Dataset always stays


def test_a_dataset_nested_under_any_property_of_a_dataset_is_a_reference() -> None:
    page = {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "@id": "https://doi.org/10.5072/page",
        "name": "Turnout",
        "license": {"@type": "Dataset", "text": "CC0", "url": "https://example.org/cc0"},
        "citation": {
            "@type": "ScholarlyArticle",
            "isBasedOn": {"@type": "Dataset", "@id": "https://doi.org/10.5072/deep"},
        },
    }
    datasets, codes = run(page)
    assert [d.id for d in datasets] == ["https://doi.org/10.5072/page"]
    assert codes == ["normalize/embedded-dataset", "normalize/embedded-dataset"]


def test_a_dataset_inside_a_webpage_is_still_the_pages_dataset() -> None:
    page = {
        "@context": "https://schema.org/",
        "@type": "WebPage",
        "mainEntity": {"@type": "Dataset", "name": "Cores", "license": {"@type": "Dataset"}},
    }
    datasets, codes = run(page)
    assert [literal(d.framed["name"]) for d in datasets] == ["Cores"]
    assert datasets[0].where == "block 1 $['mainEntity']"
    assert codes == ["normalize/embedded-dataset"]


def _regenerate() -> None:
    for page in _cases():
        text = json.dumps(run_case(page), indent=2, ensure_ascii=False, sort_keys=True)
        _expected_path(page).write_text(text + "\n", "utf-8")
        print(f"wrote {_expected_path(page).name}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--regen"]:
        sys.exit("usage: python -m tests.jsonld.test_normalize --regen")
    _regenerate()

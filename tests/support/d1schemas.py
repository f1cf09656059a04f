"""DataONE's XSDs, loaded offline, and pyxb parsing through d1_common.

`dataoneTypes_v2.0.xsd` imports the v1 and v1.1 types by remote
`schemaLocation`; they are remapped to the copies that `dataone.common`
ships, so validation never touches the network (specs.md 1.8). The composed
v2 schema also validates the v1 roots (objectList, checksum, v1 node).
Errors use `dataoneErrors.xsd` alone (no namespace).
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import d1_common.types
import xmlschema

NS_V1 = "http://ns.dataone.org/service/types/v1"
NS_V11 = "http://ns.dataone.org/service/types/v1.1"

SCHEMA_DIR = Path(d1_common.types.__file__).parent / "schemas"


@cache
def types_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(
        str(SCHEMA_DIR / "dataoneTypes_v2.0.xsd"),
        locations=[
            (NS_V1, str(SCHEMA_DIR / "dataoneTypes.xsd")),
            (NS_V11, str(SCHEMA_DIR / "dataoneTypes_v1.1.xsd")),
        ],
        allow="local",
    )


@cache
def errors_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(SCHEMA_DIR / "dataoneErrors.xsd"), allow="local")


# A document that validated once is valid: the property tests send the same capabilities,
# list and error documents again and again, and xmlschema takes 4-15 ms a document. An
# invalid one raises every time (lru_cache keeps only what returned).
@lru_cache(maxsize=2048)
def validate_types(document: bytes) -> None:
    """Raise xmlschema's error naming the path when `document` breaks D1-XSD."""
    types_schema().validate(document.decode("utf-8"))


@lru_cache(maxsize=2048)
def validate_error(document: bytes) -> None:
    errors_schema().validate(document.decode("utf-8"))


def pyxb_parse(document: bytes) -> Any:
    """Parse with d1_common's pyxb bindings (v1 or v2 by root namespace); raises when invalid."""
    import d1_common.types.dataoneTypes_v2_0 as v2

    return v2.CreateFromDocument(document)


def pyxb_exception(document: bytes) -> Any:
    """Deserialize an error document the way d1_client does."""
    import d1_common.types.exceptions as exceptions

    return exceptions.deserialize(document)

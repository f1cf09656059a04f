"""Per-document cost of the extract and normalize stages on a ~5 KB Dataset.

Run: .venv/bin/python benchmarks/bench_normalize.py
Prints the median of several rounds (ms per document); not a test, no assertions.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from adapter.jsonld.frame import frame_expanded, frame_with_pyld
from adapter.jsonld.normalize import _expand, normalize
from adapter.page.extract import extract

ROOT = Path(__file__).resolve().parent.parent
URL = "https://repo.example/dataset/soso-full"


def five_kb_page() -> bytes:
    """The SOSO-style fixture grown to a ~5 KB Dataset (more variables, as real ones have)."""
    html = (ROOT / "fixtures/pages/soso-full.html").read_text("utf-8")
    start = html.index('<script type="application/ld+json">') + len(
        '<script type="application/ld+json">'
    )
    end = html.index("</script>", start)
    data = json.loads(html[start:end])
    while len(json.dumps(data)) < 5000:
        n = len(data["variableMeasured"])
        data["variableMeasured"].append(
            {
                "@type": "PropertyValue",
                "name": f"var_{n}",
                "unitText": "mg/L",
                "description": f"Concentration of analyte {n} in the sample",
            }
        )
    return (html[:start] + json.dumps(data) + html[end:]).encode()


def median_ms(fn: Callable[[], object], rounds: int = 7, per_round: int = 200) -> float:
    """Median CPU time of one call (process time, so other load on the machine counts less)."""
    timings = []
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(per_round):
            fn()
        timings.append((time.process_time() - t0) / per_round * 1000)
    return statistics.median(timings)


def main() -> None:
    body = five_kb_page()
    extraction = extract(body, url=URL, content_type="text/html", charset=None)
    size = len(json.dumps(extraction.blocks[0].data))
    normalize(extraction.blocks, base_url=URL)  # warm the context cache
    ex = median_ms(lambda: extract(body, url=URL, content_type="text/html", charset=None))
    nz = median_ms(lambda: normalize(extraction.blocks, base_url=URL))
    expanded = _expand(extraction.blocks[0], URL, URL, [])
    assert expanded is not None
    fast = median_ms(lambda: frame_expanded(expanded))
    reference = median_ms(lambda: frame_with_pyld(expanded))
    expand = median_ms(lambda: _expand(extraction.blocks[0], URL, URL, []))
    print(f"Dataset JSON-LD: {size} bytes; page {len(body)} bytes")
    print(f"  expand (bundled context, cached): {expand:.2f} ms")
    print(
        f"  frame expanded doc, small context: {fast:.2f} ms"
        f" (pyld's jsonld.frame: {reference:.2f} ms)"
    )
    print(f"extract (JSON-LD only):  {ex:.2f} ms/page")
    print(f"normalize (expand+frame): {nz:.2f} ms/document")


if __name__ == "__main__":
    main()

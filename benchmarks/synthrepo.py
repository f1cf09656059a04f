"""A synthetic repository for benchmarks: N landing pages, a sitemap index, robots.txt.

Each page is about 20 KB of HTML carrying a realistic ~5 KB schema.org
Dataset JSON-LD; nginx (Debian's nginx-light) serves the tree and adds the
FAIR Signposting Link headers, so the server is never the bottleneck. Without
nginx a threaded stdlib server is used and the report says so.

    python benchmarks/synthrepo.py --pages 10000 --out /tmp/synth   # generate only
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import BinaryIO

PER_SITEMAP = 5_000


def dataset(i: int, origin: str, version: int = 1) -> dict[str, object]:
    doi = f"10.5072/bench.{i}"
    return {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "@id": f"https://doi.org/{doi}",
        "name": f"Benchmark dataset {i}: ocean temperature profiles, cruise {i % 97}",
        "description": (
            "Conductivity, temperature and depth profiles collected during a "
            "research cruise; quality controlled and binned to 1 m. " * 6
        )
        + f" Version {version}.",
        "url": f"{origin}/dataset/{i}",
        "identifier": {
            "@id": f"https://doi.org/{doi}",
            "@type": "PropertyValue",
            "propertyID": "https://registry.identifiers.org/registry/doi",
            "value": f"doi:{doi}",
            "url": f"https://doi.org/{doi}",
        },
        "keywords": ["oceanography", "CTD", "temperature", "salinity", f"cruise-{i % 97}"],
        "license": "https://spdx.org/licenses/CC-BY-4.0",
        "dateModified": f"2024-0{1 + i % 9}-1{i % 9}",
        "datePublished": "2023-05-01",
        "creator": [
            {
                "@type": "Person",
                "@id": f"https://orcid.org/0000-0002-{i % 9000 + 1000:04d}-000X",
                "name": f"Researcher {j}",
                "affiliation": {"@type": "Organization", "name": "Ocean Institute"},
            }
            for j in range(3)
        ],
        "encoding": {
            "@type": "MediaObject",
            "contentUrl": f"{origin}/metadata/{i}.xml",
            "encodingFormat": "http://www.isotc211.org/2005/gmd",
            "dateModified": "2024-01-01",
        },
        "distribution": [
            {
                "@type": "DataDownload",
                "contentUrl": f"{origin}/files/{i}/data.csv",
                "encodingFormat": "text/csv",
                "name": "profiles.csv",
            },
            {
                "@type": "DataDownload",
                "contentUrl": f"{origin}/files/{i}/readme.txt",
                "encodingFormat": "text/plain",
                "name": "README",
            },
        ],
        "spatialCoverage": {
            "@type": "Place",
            "geo": {"@type": "GeoShape", "box": f"{-40 + i % 10} 150 {-30 + i % 10} 160"},
        },
        "temporalCoverage": "2023-01-01/2023-02-01",
        "variableMeasured": [
            {"@type": "PropertyValue", "name": n, "unitText": u}
            for n, u in (("temperature", "degC"), ("salinity", "PSU"), ("pressure", "dbar"))
        ],
        "includedInDataCatalog": {
            "@type": "DataCatalog",
            "name": "Benchmark repository",
            "url": f"{origin}/",
        },
    }


def page(i: int, origin: str, version: int = 1) -> str:
    doc = json.dumps(dataset(i, origin, version), indent=1)
    filler = "\n".join(
        f"<p class='para'>Paragraph {k} about the dataset, its collection and processing, "
        "with enough words to make the page as heavy as a real landing page.</p>"
        for k in range(95)
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Dataset {i}</title>"
        f"<script type='application/ld+json'>{doc}</script></head><body>"
        f"<h1>Dataset {i}</h1>{filler}</body></html>"
    )


def iso_copy(i: int) -> str:
    """The ISO 19139 metadata file each Dataset's `encoding` names (a node may sync it)."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<gmd:MD_Metadata xmlns:gmd="http://www.isotc211.org/2005/gmd" '
        'xmlns:gco="http://www.isotc211.org/2005/gco">\n'
        f"  <gmd:fileIdentifier><gco:CharacterString>bench.{i}</gco:CharacterString>"
        "</gmd:fileIdentifier>\n"
        "  <gmd:dateStamp><gco:Date>2024-01-01</gco:Date></gmd:dateStamp>\n"
        "</gmd:MD_Metadata>\n"
    )


def generate(out: Path, pages: int, origin: str, changed: set[int] | None = None) -> None:
    """Write the tree; `changed` pages get version 2 (for the 1 % re-sync)."""
    (out / "dataset").mkdir(parents=True, exist_ok=True)
    (out / "metadata").mkdir(exist_ok=True)
    for i in range(pages):
        version = 2 if changed and i in changed else 1
        (out / "dataset" / f"{i}.html").write_text(page(i, origin, version))
        (out / "metadata" / f"{i}.xml").write_text(iso_copy(i))
    sitemaps = []
    for s in range(0, pages, PER_SITEMAP):
        name = f"sitemap-{s // PER_SITEMAP}.xml"
        urls = "".join(
            f"<url><loc>{origin}/dataset/{i}</loc><lastmod>2024-01-0{1 + (i % 9)}</lastmod></url>\n"
            for i in range(s, min(s + PER_SITEMAP, pages))
        )
        (out / name).write_text(
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}</urlset>\n'
        )
        sitemaps.append(name)
    index = "".join(f"<sitemap><loc>{origin}/{n}</loc></sitemap>\n" for n in sitemaps)
    (out / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{index}'
        "</sitemapindex>\n"
    )
    (out / "robots.txt").write_text(f"User-agent: *\nAllow: /\n\nSitemap: {origin}/sitemap.xml\n")


NGINX_CONF = """
worker_processes 1;
daemon off;
error_log {tmp}/error.log crit;
pid {tmp}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  sendfile on;
  keepalive_requests 100000;
  client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fcgi; uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
  types {{ text/html html; application/xml xml; text/plain txt; }}
  server {{
    listen 127.0.0.1:{port};
    root {root};
    etag on;
    location ~ ^/dataset/(\\d+)$ {{
      add_header Link '<https://doi.org/10.5072/bench.$1>; rel="cite-as", <{origin}/metadata/$1.xml>; rel="describedby"; type="application/xml"; profile="http://www.isotc211.org/2005/gmd", <{origin}/files/$1/data.csv>; rel="item"; type="text/csv", <https://schema.org/Dataset>; rel="type"';
      default_type text/html;
      try_files /dataset/$1.html =404;
    }}
  }}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Served:
    origin: str
    kind: str
    stop: Callable[[], None]


def _readable_by_workers(root: Path) -> None:
    """nginx started as root runs its workers as nobody: open the temporary folders to them."""
    temp = Path(tempfile.gettempdir()).resolve()
    for folder in (root.resolve(), *root.resolve().parents):
        if temp not in folder.parents:  # mkdtemp's 0700 folders only, nothing outside
            break
        folder.chmod(folder.stat().st_mode | 0o755)


def serve(root: Path, port: int) -> Served:
    """Serve `root` with nginx when it is installed, else a threaded stdlib server."""
    origin = f"http://127.0.0.1:{port}"
    nginx = shutil.which("nginx") or (
        "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None
    )
    if nginx:
        _readable_by_workers(root)
        tmp = Path(tempfile.mkdtemp(prefix="nginx-"))
        conf = tmp / "nginx.conf"
        conf.write_text(NGINX_CONF.format(tmp=tmp, port=port, root=root, origin=origin))
        proc = subprocess.Popen([nginx, "-c", str(conf), "-p", str(tmp)])
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)

        def stop() -> None:
            proc.send_signal(signal.SIGQUIT)
            proc.wait(10)
            shutil.rmtree(tmp, ignore_errors=True)

        return Served(origin, "nginx", stop)

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            return

        def send_head(self) -> io.BytesIO | BinaryIO | None:
            if self.path.startswith("/dataset/") and "." not in self.path:
                self.path += ".html"
            return super().send_head()

    httpd = ThreadingHTTPServer(("127.0.0.1", port), partial(Handler, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()

    def stop_py() -> None:
        httpd.shutdown()

    return Served(origin, "python-threaded", stop_py)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=10_000)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    port = args.port or free_port()
    generate(args.out, args.pages, f"http://127.0.0.1:{port}")
    print(f"{args.pages} pages in {args.out} for origin http://127.0.0.1:{port}")

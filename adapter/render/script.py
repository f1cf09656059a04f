"""The JavaScript the adapter puts into a page it renders, and the rule that ends the wait.

Why not a fixed wait: a page that writes its JSON-LD at once should take milliseconds,
and one that writes it after a slow API call must not be cut off by a guess. The page
is watched from inside: `INIT` (run before the page's own scripts) counts the fetch()
and XMLHttpRequest calls in flight and the setTimeout timers due within the budget, and
notes the time of the last DOM change. The wait ends as soon as a JSON-LD block holding
a Dataset is in the DOM (`dataset`), or when the page is quiet: loaded, nothing in
flight, no timer pending, no DOM change for `QUIET` seconds (`quiet`); the budget
bounds it either way. The adapter's own count of the requests it is serving for the
page (`adapter.render.route`) must be quiet too.

The same call hands back the page's DOM as the rule held (what Playwright's
`page.content()` serializes), so reading the page costs no second call: `content()`
runs in an isolated world of its own, whose set-up per document cost about a fifth
of a rendered page's CPU (BENCHMARKS.md). It is serialized by the DOM functions `INIT`
found before the page's scripts ran, so they cannot replace them; what a page's
scripts write into the DOM is theirs to choose either way.
"""

from __future__ import annotations

QUIET = 0.5  # seconds without requests, timers or DOM changes that end the wait
TICK_MS = 50  # how often the page checks for quiet (a Dataset is seen at the DOM change)

INIT = r"""
(() => {
  if (window.__adapterState) return;
  const maxDelay = %(max_delay)d;
  const state = { inflight: 0, timers: new Set(), last: performance.now() };
  const touch = () => { state.last = performance.now(); };
  const nativeFetch = window.fetch;
  if (nativeFetch) {
    window.fetch = function (...args) {
      state.inflight++; touch();
      let pending;
      try { pending = nativeFetch.apply(this, args); }
      catch (e) { state.inflight--; throw e; }
      return pending.finally(() => { state.inflight--; touch(); });
    };
  }
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    state.inflight++; touch();
    this.addEventListener("loadend", () => { state.inflight--; touch(); });
    return send.apply(this, args);
  };
  const nativeSet = window.setTimeout, nativeClear = window.clearTimeout;
  const apply = Reflect.apply, serializer = new XMLSerializer();
  const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
  const serialize = XMLSerializer.prototype.serializeToString;
  const doctypeOf = getter(Document.prototype, "doctype");
  const rootOf = getter(Document.prototype, "documentElement");
  const outerOf = getter(Element.prototype, "outerHTML");
  const content = () => {  // as page.content(): the doctype, then the root element
    const doctype = apply(doctypeOf, document, []), root = apply(rootOf, document, []);
    return (doctype ? apply(serialize, serializer, [doctype]) : "")
      + (root ? apply(outerOf, root, []) : "");
  };
  window.setTimeout = function (fn, delay, ...rest) {
    if (typeof fn !== "function" || !(Number(delay || 0) <= maxDelay)) {
      return nativeSet.call(window, fn, delay, ...rest);
    }
    const id = nativeSet.call(window, (...a) => {
      state.timers.delete(id); touch(); fn(...a);
    }, delay, ...rest);
    state.timers.add(id);
    return id;
  };
  window.clearTimeout = function (id) {
    state.timers.delete(id);
    return nativeClear.call(window, id);
  };
  new MutationObserver(touch).observe(document, {
    childList: true, subtree: true, attributes: true, characterData: true,
  });
  const isDataset = (v, depth) => {
    if (depth > 32 || v === null || typeof v !== "object") return false;
    if (Array.isArray(v)) return v.some((x) => isDataset(x, depth + 1));
    for (const key of ["@type", "type"]) {
      const kinds = Array.isArray(v[key]) ? v[key] : [v[key]];
      if (kinds.some((k) => typeof k === "string" && /(^|[\/:#])Dataset$/.test(k.trim()))) {
        return true;
      }
    }
    return Object.values(v).some((x) => isDataset(x, depth + 1));
  };
  const parsed = new WeakMap();  // a JSON-LD block -> [the text read, whether a Dataset]
  const hasDataset = () => {  // each block parsed once per text it has held
    for (const s of document.querySelectorAll('script[type="application/ld+json" i]')) {
      const text = s.textContent || "";
      const known = parsed.get(s);
      let found = known !== undefined && known[0] === text ? known[1] : null;
      if (found === null) {
        found = false;
        if (text.includes("Dataset")) {
          try { found = isDataset(JSON.parse(text), 0); } catch (e) { /* not yet whole */ }
        }
        parsed.set(s, [text, found]);
      }
      if (found) return true;
    }
    return false;
  };
  const ready = (quietMs) => {
    if (hasDataset()) return "dataset";
    const idle = document.readyState === "complete" && state.inflight <= 0
      && state.timers.size === 0 && performance.now() - state.last >= quietMs;
    return idle ? "quiet" : false;
  };
  // resolves as soon as the rule holds, with how it ended and the DOM then: at once on the
  // DOM change that adds a Dataset, else on a tick of the page's own (unwrapped, uncounted)
  // timer
  Object.defineProperty(window, "__adapterWait", {
    value: (quietMs) => new Promise((resolve) => {
      let done = false;
      const end = (how) => {
        if (!done) { done = true; seen.disconnect(); resolve([how, content()]); }
      };
      const seen = new MutationObserver(() => { if (hasDataset()) end("dataset"); });
      seen.observe(document, { childList: true, subtree: true, characterData: true });
      const tick = () => {
        const how = ready(quietMs);
        if (how) end(how); else if (!done) nativeSet.call(window, tick, %(tick_ms)d);
      };
      tick();
    }),
  });
})();
"""

# [how, the DOM]; a document without INIT (none ran in it) is quiet, and read by content()
WAIT = "(quietMs) => window.__adapterWait ? window.__adapterWait(quietMs) : ['quiet', null]"


def init_script(budget_seconds: float) -> str:
    """`INIT` with the longest timer worth waiting for: one due after the budget is not."""
    return INIT % {"max_delay": int(budget_seconds * 1000), "tick_ms": TICK_MS}

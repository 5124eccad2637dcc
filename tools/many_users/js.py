"""The JavaScript the load's browsers run: an error watcher and one-round-trip page snapshots."""

from tools.many_users.config import BATCH_LABEL

# Runs in every page before Streamlit's own scripts: remembers every exception element and
# uncaught JS error ever shown, so a traceback drawn and removed between two checks still counts.
WATCH_JS = """
(() => {
  window.__loadErrors = [];
  const seen = new WeakSet();
  const scan = () => {
    for (const el of document.querySelectorAll("[data-testid='stException']")) {
      if (!seen.has(el)) {
        seen.add(el);
        window.__loadErrors.push("stException: " + (el.textContent || "").slice(0, 500));
      }
    }
  };
  new MutationObserver(scan).observe(document, {childList: true, subtree: true});
  window.addEventListener("error", (e) => window.__loadErrors.push("JS error: " + e.message));
})();
"""

# Everything a check needs, in one round trip (textContent: no forced layout).
STATE_JS = """
() => {
  const text = (el) => (el ? el.textContent.trim() : null);
  const metric = (label) => {
    for (const box of document.querySelectorAll("[data-testid='stMetric']")) {
      const name = text(box.querySelector("[data-testid='stMetricLabel']")) || "";
      if (name.startsWith(label)) return text(box.querySelector("[data-testid='stMetricValue']"));
    }
    return null;
  };
  const main = document.querySelector("[data-testid='stMain']") || document;
  const caption = [...main.querySelectorAll("[data-testid='stCaptionContainer']")]
    .map(text).find((t) => t.startsWith("Batch "));
  const input = document.querySelector("input[aria-label='BATCH_LABEL']");
  return {
    title: text(main.querySelector("h1")),
    caption: caption || null,
    latency: metric("Latency"),
    bottleneck: metric("Bottleneck"),
    batch_input: input ? input.value : null,
    search: location.search,
    errors: window.__loadErrors || [],
  };
}
""".replace("BATCH_LABEL", BATCH_LABEL)

# True once the page shows the caption and latency given and the script is idle; "exception"
# as soon as an exception element appears (the check that follows reports it).
SHOWN_JS = """
([caption, latency]) => {
  if (document.querySelector("[data-testid='stException']")) return "exception";
  if (document.querySelector("[data-testid='stStatusWidget']")) return false;
  const main = document.querySelector("[data-testid='stMain']") || document;
  const caps = main.querySelectorAll("[data-testid='stCaptionContainer']");
  if (![...caps].some((c) => c.textContent.trim().startsWith(caption))) return false;
  for (const box of document.querySelectorAll("[data-testid='stMetric']")) {
    const label = box.querySelector("[data-testid='stMetricLabel']");
    if (label && label.textContent.trim().startsWith("Latency")) {
      const value = box.querySelector("[data-testid='stMetricValue']");
      return !!value && value.textContent.trim() === latency;
    }
  }
  return false;
}
"""
IDLE_JS = "() => !document.querySelector(\"[data-testid='stStatusWidget']\")"

/// The page's style, script and icon, built into the binary: the page loads nothing from
/// anywhere else, and works offline. The script only makes the page live (it fetches the same
/// page's main part every 2 s and puts it in place); without it the page refreshes itself.
enum StaticAssets {
    struct Asset {
        let contentType: String
        let body: String
    }

    static let all: [String: Asset] = [
        "/app.css": Asset(contentType: "text/css; charset=utf-8", body: css),
        "/app.js": Asset(contentType: "text/javascript; charset=utf-8", body: script),
        "/favicon.svg": Asset(contentType: "image/svg+xml", body: icon),
        // Browsers ask for it whatever the page says.
        "/favicon.ico": Asset(contentType: "image/svg+xml", body: icon),
    ]

    /// Names from outside can be long and unbroken: they wrap anywhere rather than push the
    /// columns off the screen.
    static let css = """
        :root { color-scheme: light dark; font-family: system-ui, sans-serif; font-size: 15px; }
        body { margin: 0 auto; max-width: 90rem; padding: 0 1rem 2rem; }
        header { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; padding: .6rem 0;
          border-bottom: 1px solid #8884; }
        header h1 { font-size: 1.2rem; margin: 0; }
        header h1 a { color: inherit; text-decoration: none; }
        #live-status { color: #888; font-size: .85rem; }
        header form { margin-left: auto; }
        h2 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
        table { border-collapse: collapse; width: 100%; table-layout: auto; }
        th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #8883; vertical-align: top; }
        td { overflow-wrap: anywhere; }
        td.name, td.error { max-width: 28rem; }
        td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        #counts { width: auto; }
        .state-failed { color: #c62828; }
        .state-done { color: #2e7d32; }
        .stale { color: #c62828; font-weight: 600; }
        #hourly rect.done { fill: #2e7d32; } #hourly rect.failed { fill: #c62828; }
        .worker-silent, .worker-stopped { color: #c62828; font-weight: 600; }
        .note { font-size: .85em; opacity: .8; }
        .notice { padding: .5rem .8rem; border: 1px solid #2e7d3288; border-radius: .3rem; }
        .down { padding: .5rem .8rem; border: 1px solid #c6282888; border-radius: .3rem; }
        .paused { padding: .5rem .8rem; border: 1px solid #f9a82588; border-radius: .3rem; }
        form.inline { display: inline; margin: 0; }
        button, .clip { white-space: nowrap; }
        nav form { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .8rem 0; }
        progress { width: 6rem; }
        pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #8881; padding: .5rem; }
        img.poster { max-width: 320px; height: auto; border: 1px solid #8884; }
        footer { margin-top: 2rem; color: #888; font-size: .85rem; }

        """

    /// Replaces `<main>` with the server's newest rendering of it (the server escaped every
    /// value; nothing here builds HTML from data). Waits while a pointer is down or a form in
    /// it has focus, so a click or a typed value is never swept away; stops while the tab is hidden.
    static let script = """
        "use strict";
        (function () {
          const main = document.getElementById("live");
          const status = document.getElementById("live-status");
          if (!main || !window.fetch) return;
          let holding = false;
          let last = null;
          document.addEventListener("pointerdown", () => { holding = true; });
          document.addEventListener("pointerup", () => { setTimeout(() => { holding = false; }, 400); });
          function say(text) { if (status) status.textContent = text; }
          async function refresh() {
            if (holding || document.hidden || main.contains(document.activeElement)) return;
            try {
              const answer = await fetch(location.href, {
                headers: { "X-VMerge-Part": "main" }, cache: "no-store", credentials: "same-origin" });
              if (!answer.ok) { say("the dashboard answered " + answer.status); return; }
              const text = await answer.text();
              if (text !== last && !holding && !main.contains(document.activeElement)) {
                main.innerHTML = text;
                last = text;
              }
              say("live, updated " + new Date().toLocaleTimeString());
            } catch (error) {
              say("the dashboard cannot be reached; retrying");
            }
          }
          main.dataset.live = "yes";
          say("live");
          setInterval(refresh, 2000);
        })();

        """

    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" \
        fill="#1565c0"/><path d="M4 4h3v8H4zM9 4h3v8H9z" fill="#fff"/></svg>

        """
}

import Foundation
import VMergeCore

/// What every page of the dashboard knows about the request it answers.
struct PageContext {
    let now: Date
    /// Whether the dashboard was given a token: sign-in is offered only then.
    let actionsEnabled: Bool
    /// The browser's session: actions are shown, their forms carrying its form token.
    let session: ActionAccess.Session?
    /// The page's own path and query, where an action's form comes back to.
    let returnPath: String
    /// What the last action did, shown once.
    let notice: String?
}

/// The frame every page shares: the head (style, icon and script from the server itself), the
/// header with sign-in, an optional navigation part, the last action's notice, `<main id="live">` (what the script keeps
/// live: the server sends only it when asked with `X-VMerge-Part: main`) and the footer.
enum DashboardPage {
    static func document(title: String, nav: String = "", main: String, context: PageContext) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <noscript><meta http-equiv="refresh" content="10"></noscript>
        <title>\(HTMLText.escaped(title)) · vmerge</title>
        <link rel="stylesheet" href="/app.css">
        <link rel="icon" href="/favicon.svg" type="image/svg+xml">
        <script src="/app.js" defer></script>
        </head>
        <body>
        <header><h1><a href="/">vmerge</a></h1><span id="live-status">refreshes every 10 s</span>\(signIn(context))</header>
        \(nav)\(notice(context))
        <main id="live">
        \(main)
        </main>
        <footer>Metrics for Prometheus: <a href="/metrics">/metrics</a>.</footer>
        </body>
        </html>

        """
    }

    /// What the last action did, above `<main>`: the script's updates of `<main>` leave it.
    private static func notice(_ context: PageContext) -> String {
        context.notice.map { "\n<p class=\"notice\" role=\"status\">\(HTMLText.escaped($0))</p>" } ?? ""
    }

    /// What `<main>` holds for a page: its own parts, then when it was read.
    static func main(_ parts: [String], context: PageContext) -> String {
        var lines = parts
        lines.append("<p><small>Read at <time>\(timestamp(context.now.timeIntervalSince1970))</time>.</small></p>")
        return lines.joined(separator: "\n")
    }

    private static func signIn(_ context: PageContext) -> String {
        guard context.actionsEnabled else { return "" }
        if let session = context.session {
            return "<form method=\"post\" action=\"/logout\">\(hidden("form_token", session.formToken))"
                + "<button type=\"submit\">Sign out</button></form>"
        }
        // Back to the page it was made from: signing in keeps the filter.
        return "<form method=\"post\" action=\"/login\">\(hidden("return", context.returnPath))"
            + "<label>Token to act <input type=\"password\" name=\"token\" "
            + "autocomplete=\"current-password\" required></label> <button type=\"submit\">Sign in</button></form>"
    }

    /// A button that POSTs to `path` (an action), only for a signed-in browser.
    static func action(_ path: String, _ label: String, context: PageContext) -> String {
        guard let session = context.session else { return "" }
        return "<form class=\"inline\" method=\"post\" action=\"\(HTMLText.escaped(path))\">"
            + hidden("form_token", session.formToken) + hidden("return", context.returnPath)
            + "<button type=\"submit\">\(HTMLText.escaped(label))</button></form>"
    }

    static func hidden(_ name: String, _ value: String) -> String {
        "<input type=\"hidden\" name=\"\(name)\" value=\"\(HTMLText.escaped(value))\">"
    }

    /// A row of cells; each cell's text is already HTML.
    static func row(_ cells: [String], id: String? = nil, classes: [String?] = []) -> String {
        let opening = id.map { "<tr id=\"\(HTMLText.escaped($0))\">" } ?? "<tr>"
        return opening
            + cells.enumerated().map { index, cell in
                let name = index < classes.count ? classes[index] : nil
                return name.map { "<td class=\"\($0)\">\(cell)</td>" } ?? "<td>\(cell)</td>"
            }.joined() + "</tr>"
    }

    /// Whole seconds as h:mm:ss (m:ss under an hour).
    static func duration(_ seconds: Double) -> String {
        let whole = seconds.isFinite ? Int(min(max(0, seconds), 1e9).rounded()) : 0
        let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }

    /// UTC, to the second; "" for a time no calendar holds (a row's NaN or infinity), and a
    /// time beyond the years 1 to 9999 pinned to them (Foundation's formatter has no year 10000).
    static func timestamp(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "" }
        let seconds = min(max(seconds, -62_135_596_800), 253_402_300_799)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }
}

/// Text for a URL's query or path segment: everything but the unreserved characters
/// percent-encoded (so `&`, `=`, `+`, `#`, `/` and `%` in a name stay data).
enum URLText {
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func component(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// `path?name=value&...` with the empty values left out.
    static func path(_ path: String, _ query: [(name: String, value: String)]) -> String {
        let pairs = query.filter { !$0.value.isEmpty }.map { "\(component($0.name))=\(component($0.value))" }
        return pairs.isEmpty ? path : path + "?" + pairs.joined(separator: "&")
    }

    /// Where an action may send the browser back to: a path on this server only ("/x", never
    /// "//host" or "/\\host", which browsers read as another site), else "/".
    static func localReturn(_ text: String?) -> String {
        guard let text, text.hasPrefix("/"), !text.hasPrefix("//"), !text.contains("\\"),
            !text.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7f || $0.value > 0x7e })
        else { return "/" }
        return text
    }
}

import VMergeCore

/// Text from outside (job names, worker names, error messages) made safe for HTML: control
/// characters made visible as in a log line (`VisibleText`), then the five characters HTML gives
/// a meaning escaped. Safe in element text and in a double- or single-quoted attribute value;
/// never for a URL or inside a script (the pages have none).
package enum HTMLText {
    package static func escaped(_ text: String) -> String {
        var out = ""
        for character in VisibleText.of(text) {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    /// `escaped`, cut to `limit` characters with "…" (a list shows a name or an error; the job's
    /// own page shows it whole): a megabyte written into a row does not make every page that size.
    package static func escaped(_ text: String, limit: Int) -> String {
        text.count <= limit ? escaped(text) : escaped(String(text.prefix(limit))) + "…"
    }
}

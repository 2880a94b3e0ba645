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
}

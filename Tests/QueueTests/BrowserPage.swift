import Foundation

/// One tab of a `Browser`, attached as a session: load a page, run script in it, click, wait,
/// take a screenshot; and what the page said on the way (console, exceptions, log, dialogs).
final class BrowserPage {
    let browser: Browser
    let target: String
    let session: String
    let records: Records

    init(browser: Browser, target: String, session: String, records: Records) {
        self.browser = browser
        self.target = target
        self.session = session
        self.records = records
    }

    /// Loads `url` and returns once its load event has fired.
    func navigate(_ url: String, timeout: TimeInterval = 30) throws {
        let loads = records.loads
        let reply = try browser.send("Page.navigate", ["url": url], session: session, timeout: timeout)
        if let error = reply["errorText"] as? String { throw Browser.Failure("cannot load \(url): \(error)") }
        try waitForLoad(after: loads, timeout: timeout)
    }

    /// Loads the page again (as the reload button does) and returns once it has loaded.
    func reload(timeout: TimeInterval = 30) throws {
        let loads = records.loads
        try browser.send("Page.reload", ["ignoreCache": true], session: session, timeout: timeout)
        try waitForLoad(after: loads, timeout: timeout)
    }

    private func waitForLoad(after loads: Int, timeout: TimeInterval) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while records.loads == loads {
            guard try browser.pump(until: deadline) else {
                throw Browser.Failure("the page did not finish loading in \(timeout) s")
            }
        }
    }

    /// The value of the script `expression` (a promise is awaited), as JSON gives it: String,
    /// NSNumber (Int, Double, Bool), arrays, dictionaries, NSNull for null and undefined. A script
    /// that throws is thrown. Run again while a navigation replaces the document (the meta refresh).
    func evaluate(_ expression: String) throws -> Any {
        let deadline = Date().addingTimeInterval(5)
        while true {
            let reply: [String: Any]
            do {
                reply = try browser.send(
                    "Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true],
                    session: session)
            } catch let failure as Browser.Failure where failure.description.contains("context") && Date() < deadline {
                while try browser.pump(until: Date().addingTimeInterval(0.1)) {}
                continue
            }
            if let details = reply["exceptionDetails"] as? [String: Any] {
                throw Browser.Failure("the script threw \(Records.describe(details)): \(expression)")
            }
            return (reply["result"] as? [String: Any])?["value"] ?? NSNull()
        }
    }

    /// `evaluate`, its value as a `T` (or thrown).
    func evaluate<T>(_ expression: String, as type: T.Type) throws -> T {
        let value = try evaluate(expression)
        guard let typed = value as? T else { throw Browser.Failure("\(expression) gave \(value), not a \(T.self)") }
        return typed
    }

    /// A real click, as a mouse makes it: pressed and released at the middle of the first element
    /// that `selector` matches, scrolled into view first.
    func click(_ selector: String) throws {
        let point = try evaluate(
            """
            (() => {
                const element = document.querySelector(\(BrowserPage.literal(selector)));
                if (!element) return null;
                element.scrollIntoView({block: "center"});
                const box = element.getBoundingClientRect();
                return [box.left + box.width / 2, box.top + box.height / 2];
            })()
            """)
        guard let xy = point as? [Double], xy.count == 2 else { throw Browser.Failure("nothing matches \(selector)") }
        for type in ["mouseMoved", "mousePressed", "mouseReleased"] {
            try browser.send(
                "Input.dispatchMouseEvent",
                [
                    "type": type, "x": xy[0], "y": xy[1], "button": type == "mouseMoved" ? "none" : "left",
                    "clickCount": 1,
                ],
                session: session)
        }
    }

    /// Waits until the script `condition` is true, reading it again every 0.1 s (a script error or
    /// a document being replaced counts as not yet). With `reloadingEvery`, the page is also
    /// reloaded that often, for a page that does not update itself. Throws after `timeout`.
    func waitFor(_ condition: String, timeout: TimeInterval = 30, reloadingEvery: TimeInterval? = nil) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var reloaded = Date()
        var last = "false"
        while true {
            do {
                if try evaluate("Boolean(\(condition))", as: Bool.self) { return }
            } catch {
                last = "\(error)"
            }
            guard Date() < deadline else { throw Browser.Failure("waited \(timeout) s for \(condition): \(last)") }
            if let every = reloadingEvery, Date().timeIntervalSince(reloaded) >= every {
                try reload()
                reloaded = Date()
            }
            while try browser.pump(until: Date().addingTimeInterval(0.1)) {}
        }
    }

    /// The visible page (the window's size) as PNG, written to `file` (its folder made); its bytes.
    @discardableResult
    func screenshot(to file: URL) throws -> Data {
        let reply = try browser.send("Page.captureScreenshot", ["format": "png"], session: session)
        guard let text = reply["data"] as? String, let png = Data(base64Encoded: text) else {
            throw Browser.Failure("Page.captureScreenshot gave no image")
        }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try png.write(to: file)
        return png
    }

    /// What went wrong on the page so far (`Records.problems`), read once the events still on
    /// their way (a late console call, an image's error) have had `settle` seconds to arrive.
    func problems(settle: TimeInterval = 0.3) throws -> [String] {
        let deadline = Date().addingTimeInterval(settle)
        while try browser.pump(until: deadline) {}
        return records.problems
    }

    /// Closes the tab.
    func close() { browser.closePage(self) }

    /// A string as a JavaScript string literal (JSON's quoting is JavaScript's).
    static func literal(_ text: String) -> String {
        let array = (try? JSONSerialization.data(withJSONObject: [text])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: array, as: UTF8.self).dropFirst().dropLast())
    }

    /// What the page said, as the browser reported it.
    final class Records {
        /// console.* calls: the call's type (log, warning, error, ...) and its arguments' text.
        private(set) var console: [(type: String, text: String)] = []
        /// Uncaught exceptions.
        private(set) var exceptions: [String] = []
        /// The browser's own messages about the page (network, security, violations): level and text.
        private(set) var log: [(level: String, text: String)] = []
        /// alert, confirm, prompt and beforeunload dialogs: type and message. Each was accepted.
        private(set) var dialogs: [(type: String, message: String)] = []
        /// Load events so far.
        private(set) var loads = 0

        /// Everything that went wrong, one line each: console errors and assertions, exceptions,
        /// error log entries, and any dialog (the dashboard opens none: one means injected script
        /// ran). Empty on a clean page.
        var problems: [String] {
            console.filter { ["error", "assert"].contains($0.type) }.map { "console.\($0.type): \($0.text)" }
                + exceptions.map { "exception: \($0)" }
                + log.filter { $0.level == "error" }.map { "log: \($0.text)" }
                + dialogs.map { "dialog \($0.type): \($0.message)" }
        }

        func record(_ method: String, _ parameters: [String: Any]) {
            switch method {
            case "Page.loadEventFired":
                loads += 1
            case "Runtime.consoleAPICalled":
                let arguments = parameters["args"] as? [[String: Any]] ?? []
                let text = arguments.map { "\($0["value"] ?? $0["description"] ?? $0["type"] ?? "?")" }
                console.append((parameters["type"] as? String ?? "?", text.joined(separator: " ")))
            case "Runtime.exceptionThrown":
                exceptions.append(Records.describe(parameters["exceptionDetails"] as? [String: Any] ?? [:]))
            case "Log.entryAdded":
                let entry = parameters["entry"] as? [String: Any] ?? [:]
                let text = "\(entry["source"] ?? "?"): \(entry["text"] ?? "") \(entry["url"] ?? "")"
                log.append((entry["level"] as? String ?? "?", text))
            case "Page.javascriptDialogOpening":
                dialogs.append((parameters["type"] as? String ?? "?", parameters["message"] as? String ?? ""))
            default:
                break
            }
        }

        /// An exception's text and, when there is one, the thrown value's description.
        static func describe(_ details: [String: Any]) -> String {
            let thrown = (details["exception"] as? [String: Any])?["description"] as? String
            return [details["text"] as? String, thrown].compactMap { $0 }.joined(separator: " ")
        }
    }
}

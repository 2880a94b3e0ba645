import CCurl

/// libcurl's process-wide set-up, done once before the first handle (curl_global_init is not
/// thread-safe before 7.84, so it runs under Swift's lazy-global once).
enum CurlLibrary {
    private static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// Whether libcurl could be set up; false only when it is out of memory at start.
    static var isReady: Bool { initialised }

    /// The linked libcurl's version, as `curl --version` prints it ("7.88.1").
    static var version: String {
        guard let info = vm_curl_version() else { return "unknown" }
        return String(cString: info.pointee.version)
    }
}

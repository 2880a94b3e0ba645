import CCurl
import Foundation

/// Owns one libcurl easy handle. A handle is reused from one request to the next (reset between
/// them) so that its connection to a host stays open: the ranged reads of one object go over one
/// connection, as libcurl keeps it in the handle's cache. Not for two threads at once.
final class CurlHandle {
    let raw: UnsafeMutableRawPointer

    init() throws(HTTPFailure) {
        guard CurlLibrary.isReady, let handle = curl_easy_init() else {
            throw HTTPFailure(.local, "cannot set up the HTTP client (libcurl): out of memory")
        }
        raw = handle
    }

    deinit { curl_easy_cleanup(raw) }

    /// Every option back to its default; the open connections and the TLS sessions stay.
    func reset() { curl_easy_reset(raw) }

    func set(_ option: CURLoption, _ value: Int) throws(HTTPFailure) {
        try check(vm_curl_set_long(raw, option, value), option)
    }

    func set(_ option: CURLoption, _ value: String) throws(HTTPFailure) {
        try check(vm_curl_set_string(raw, option, value), option)
    }

    func set(offset option: CURLoption, _ value: Int64) throws(HTTPFailure) {
        try check(vm_curl_set_offset(raw, option, curl_off_t(value)), option)
    }

    func setPointer(_ option: CURLoption, _ value: UnsafeMutableRawPointer?) throws(HTTPFailure) {
        try check(vm_curl_set_pointer(raw, option, value), option)
    }

    /// One transfer with the options set; the error buffer's text when it fails.
    func perform() -> (code: CURLcode, detail: String) {
        var buffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let code = buffer.withUnsafeMutableBufferPointer { bytes -> CURLcode in
            let set = vm_curl_set_pointer(raw, CURLOPT_ERRORBUFFER, bytes.baseAddress)
            guard set == CURLE_OK else { return set }
            let code = curl_easy_perform(raw)
            _ = vm_curl_set_pointer(raw, CURLOPT_ERRORBUFFER, nil)
            return code
        }
        let detail = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (code, detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
    }

    func info(long info: CURLINFO) -> Int {
        var value = 0
        return vm_curl_get_long(raw, info, &value) == CURLE_OK ? value : 0
    }

    func info(string info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard vm_curl_get_string(raw, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(HTTPFailure) {
        // An option this libcurl does not know is a build or version fault, not a remote one.
        guard code == CURLE_OK else {
            throw HTTPFailure(
                .local,
                "the HTTP client refused option \(option.rawValue): \(String(cString: curl_easy_strerror(code)))")
        }
    }
}

/// Owns a curl_slist of request headers for as long as a transfer uses it.
final class CurlHeaderList {
    private(set) var raw: UnsafeMutablePointer<curl_slist>?

    init(_ lines: [String]) throws(HTTPFailure) {
        for line in lines {
            guard let appended = curl_slist_append(raw, line) else {
                throw HTTPFailure(.local, "cannot set up the HTTP client (libcurl): out of memory")
            }
            raw = appended
        }
    }

    deinit { curl_slist_free_all(raw) }
}

import CCurl
import Foundation

/// The state of one transfer that libcurl's callbacks reach through their context pointer: the
/// response's headers and body as they arrive, and the request's body as it is sent.
final class Transfer {
    private let request: HTTPRequest
    private let receive: ((UnsafeRawBufferPointer) -> Bool)?
    /// Asked once, before the first byte of a success's body is taken: a reason refuses it.
    var accept: ((HTTPHeaders) -> String?)?
    /// Why the answer was refused by `accept`.
    private(set) var rejected: String?
    private var accepted = false
    private let shouldStop: @Sendable () -> Bool
    private(set) var headers = HTTPHeaders()
    private(set) var body = Data()
    /// How much of the request's body has been handed to libcurl.
    private var sent: Int64 = 0
    /// The cancellation stopped the transfer (not a failure of the network).
    private(set) var stopped = false
    /// The receiver refused what came (not a failure of the network).
    private(set) var refused = false
    /// A ranged request answered with the whole resource (a server that ignores Range): stopped.
    private(set) var wholeInsteadOfRange = false

    /// The address a connection was refused to (not public, and not allowed).
    private(set) var refusedAddress: String?
    /// What libcurl's socket callback asks (see `AddressRule`); lives as long as the transfer.
    let addressGuard = UnsafeMutablePointer<vm_curl_address_guard>.allocate(capacity: 1)

    init(request: HTTPRequest, receive: ((UnsafeRawBufferPointer) -> Bool)?, shouldStop: @escaping @Sendable () -> Bool)
    {
        self.request = request
        self.receive = receive
        self.shouldStop = shouldStop
        addressGuard.initialize(to: vm_curl_address_guard(check: Transfer.checkAddress, context: nil))
        addressGuard.pointee.context = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit { addressGuard.deallocate() }

    static let checkAddress: vm_curl_address_check = { context, family, bytes in
        let transfer = of(context)
        guard let bytes else { return 0 }
        if AddressRule.isPublic(family: family, bytes: bytes) { return 1 }
        transfer.refusedAddress = AddressRule.text(family: family, bytes: bytes)
        return 0
    }

    private static func of(_ context: UnsafeMutableRawPointer?) -> Transfer {
        Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
    }

    static let header: vm_curl_data = { bytes, size, count, context in
        let transfer = of(context)
        let length = size * count
        guard let bytes else { return length }
        let line = String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
        transfer.headers.take(line: line)
        return length
    }

    static let body: vm_curl_data = { bytes, size, count, context in
        let transfer = of(context)
        let length = size * count
        guard let bytes, length > 0 else { return length }
        let buffer = UnsafeRawBufferPointer(start: bytes, count: length)
        // Only a success's body goes to the reader: an error's (S3's XML) or a redirect's is kept
        // for its message, never taken as if it were the object.
        // A ranged request streams only a 206: a server that ignores Range answers 200 with the
        // whole body, which is not the bytes asked for.
        let ranged = transfer.request.headers.contains { $0.name.lowercased() == "range" }
        let status = transfer.headers.status
        // Refused at its first bytes, not downloaded whole and thrown away (the caller says why).
        if transfer.receive != nil, ranged, (200..<300).contains(status), status != 206 {
            transfer.wholeInsteadOfRange = true
            return 0
        }
        if let receive = transfer.receive, ranged ? status == 206 : (200..<300).contains(status) {
            if !transfer.accepted {
                if let problem = transfer.accept?(transfer.headers) {
                    transfer.rejected = problem
                    return 0
                }
                transfer.accepted = true
            }
            guard receive(buffer) else {
                transfer.refused = true
                return 0
            }
        } else if transfer.body.count < 1 << 20 || transfer.receive == nil {
            transfer.body.append(contentsOf: buffer)
        }
        return length
    }

    static let upload: vm_curl_data = { bytes, size, count, context in
        let transfer = of(context)
        guard let bytes else { return vm_curl_read_abort() }
        let room = Int64(size * count)
        let length = transfer.request.body.length
        let wanted = Int(min(room, length - transfer.sent))
        guard wanted > 0 else { return 0 }
        switch transfer.request.body {
        case .none: return 0
        case let .bytes(data):
            let start = data.startIndex + Int(transfer.sent)
            data.copyBytes(
                to: UnsafeMutableRawPointer(bytes).assumingMemoryBound(to: UInt8.self), from: start..<start + wanted)
            transfer.sent += Int64(wanted)
            return wanted
        case let .file(descriptor, offset, _):
            let count = pread(descriptor, bytes, wanted, off_t(offset + transfer.sent))
            // A file that shrank or failed under the upload stops it: a short object is never sent
            // as if it were whole.
            guard count > 0 else { return vm_curl_read_abort() }
            transfer.sent += Int64(count)
            return count
        }
    }

    static let progress: vm_curl_progress = { context, _, _, _, _ in
        let transfer = of(context)
        guard transfer.shouldStop() else { return 0 }
        transfer.stopped = true
        return 1
    }
}

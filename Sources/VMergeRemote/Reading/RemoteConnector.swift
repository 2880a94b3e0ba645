import Foundation
import VMergeCore

/// Makes the clients a job's remote files are read and written with: the AWS credentials and S3
/// endpoint found once (as the AWS tools find them), then a client of its own for each object
/// (one libcurl handle is for one thread, and each object is read on the thread that decodes it).
package final class RemoteConnector: @unchecked Sendable {
    let chain: CredentialChain
    let settings: HTTPClient.Settings
    private let lock = NSLock()
    private var found: Result<(S3Endpoint, AWSCredentials), CredentialFailure>?

    /// Where uploads go multipart (a test's hook; nil: `S3Client`'s sizes).
    let uploadPart: Int64?

    /// The signal that stopped the run (0: none): a transfer stopped by it ends the job as
    /// cancelled, not failed.
    let stopSignal: @Sendable () -> Int32

    package init(
        environment: [String: String] = ProcessInfo.processInfo.environment, uploadPart: Int64? = nil,
        stopSignal: @escaping @Sendable () -> Int32 = { 0 }
    ) {
        self.uploadPart = uploadPart
        self.stopSignal = stopSignal
        chain = CredentialChain(environment: environment)
        var settings = HTTPClient.Settings(environment: environment)
        settings.shouldStop = { stopSignal() != 0 }
        self.settings = settings
    }

    /// A client for S3, or why none can be had (no credentials, a bad endpoint): a
    /// `CredentialFailure`.
    func s3Client() throws -> S3Client {
        lock.lock()
        if found == nil {
            do { found = .success((try chain.endpoint(), try chain.credentials(settings: settings))) } catch {
                found = .failure(error)
            }
        }
        let result = found!
        lock.unlock()
        let (endpoint, credentials) = try result.get()
        do {
            let client = try S3Client(endpoint: endpoint, credentials: credentials, settings: settings)
            if let uploadPart { client.uploadSizes = (uploadPart, uploadPart) }
            return client
        } catch {
            throw CredentialFailure(message: error.message)
        }
    }

    func httpClient(publicOnly: Bool = true, redirectCheck: (@Sendable (URL) -> String?)? = nil) throws(HTTPFailure)
        -> HTTPClient
    {
        var settings = settings
        settings.publicAddressesOnly = publicOnly
        settings.redirectCheck = redirectCheck
        return try HTTPClient(settings)
    }

    /// A fetcher for one remote object; an https one connects only to public addresses unless
    /// `publicOnly` is false (its name is under an operator's prefix). S3 goes to the endpoint the
    /// operator configured, whatever its address.
    func fetcher(for name: RemoteName, access: RemoteAccess = .commandLine) throws -> any RemoteFetcher {
        // Unlisted: public addresses only. A redirect must keep to the same rules as the name did
        // (listed names stay under a listed prefix; a job from outside stays under one).
        let publicOnly = !access.isListed(name)
        let redirectCheck: @Sendable (URL) -> String? = { url in
            guard let target = RemoteName(url.absoluteString) else { return "a name vmerge cannot use" }
            if (access.listingRequired || !publicOnly) && !access.isListed(target) {
                return "\(target), outside the allowed prefixes"
            }
            return nil
        }
        switch name {
        case let .s3(address):
            do { return S3Fetcher(address: address, client: try s3Client()) } catch {
                var failure = RemoteReadFailure(name: name, reason: "\(error)", isTransient: false)
                failure.credentials = true
                throw failure
            }
        case let .https(url):
            do {
                return HTTPSFetcher(
                    url: url, client: try httpClient(publicOnly: publicOnly, redirectCheck: redirectCheck))
            } catch {
                throw RemoteReadFailure(name: name, reason: error.message, isTransient: false)
            }
        }
    }

    /// The sub-prefixes ("folders") directly under an `s3://bucket/prefix/`, by their names: a
    /// prefix of jobs, as a folder of jobs is on disk.
    package func folders(under prefix: S3Address) throws -> [String] {
        do { return try s3Client().subPrefixes(of: prefix) } catch let failure as S3Failure {
            throw failure.isTransient
                ? VMergeError.io(file: prefix.description, message: failure.message)
                : VMergeError.invalidInput(file: prefix.description, reason: failure.message)
        } catch {
            throw VMergeError.invalidInput(file: prefix.description, reason: "\(error)")
        }
    }
}

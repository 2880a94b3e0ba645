import Foundation
import VMergeCore

/// The AWS tools' shared files, read as they read them: `~/.aws/credentials` (sections named after
/// the profile) and `~/.aws/config` (`[default]` and `[profile NAME]`), or the files
/// `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE` name. A missing file is an empty one.
struct AWSConfigFiles: Sendable {
    /// The profile's settings, credentials file over config file (as the AWS CLI merges them).
    var settings: [String: String]
    /// The profile in use, and whether it was asked for (AWS_PROFILE) rather than defaulted.
    var profile: String
    var profileAsked: Bool
    /// The variable that asked for it (AWS_PROFILE, else AWS_DEFAULT_PROFILE), for messages.
    var profileVariable: String
    /// Whether either file has a section for the profile.
    var profileFound: Bool
    /// The profile's keys, all three from one file: the credentials file's when it has an access
    /// key, else the config file's (as botocore takes them; a session token of the config file
    /// never joins the credentials file's keys).
    var keys: (id: String?, secret: String?, token: String?)

    init(environment: [String: String]) {
        let home = environment["HOME"] ?? NSHomeDirectory()
        // An empty AWS_PROFILE is unset (it no longer hides AWS_DEFAULT_PROFILE), and messages
        // name the variable actually used.
        let named = ["AWS_PROFILE", "AWS_DEFAULT_PROFILE"].first { environment[$0]?.isEmpty == false }
        profileVariable = named ?? "AWS_PROFILE"
        profile = named.flatMap { environment[$0] } ?? "default"
        profileAsked = named != nil
        let credentialsPath = environment["AWS_SHARED_CREDENTIALS_FILE"] ?? home + "/.aws/credentials"
        let configPath = environment["AWS_CONFIG_FILE"] ?? home + "/.aws/config"
        let credentials = AWSConfigFiles.sections(atPath: credentialsPath)[profile]
        let configName = profile == "default" ? "default" : "profile " + profile
        let config = AWSConfigFiles.sections(atPath: configPath)[configName]
        settings = (config ?? [:]).merging(credentials ?? [:]) { _, fromCredentials in fromCredentials }
        profileFound = credentials != nil || config != nil
        let keySection = credentials?["aws_access_key_id"]?.isEmpty == false ? credentials : config
        let key: (String) -> String? = { keySection?[$0].flatMap { $0.isEmpty ? nil : $0 } }
        keys = (key("aws_access_key_id"), key("aws_secret_access_key"), key("aws_session_token"))
    }

    subscript(key: String) -> String? { settings[key].flatMap { $0.isEmpty ? nil : $0 } }

    /// `[section]` headers and `key = value` lines; `#` and `;` start comments; nested lines (a
    /// `services` block's) are skipped.
    static func sections(atPath path: String) -> [String: [String: String]] {
        guard let data = try? SafeFile.read(path, limit: 1 << 20) else { return [:] }
        var sections: [String: [String: String]] = [:]
        var current: String?
        for raw in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
            if raw.first == " " || raw.first == "\t" { continue }
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let section = current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            sections[section, default: [:]][key] = value
        }
        return sections
    }
}

import Foundation

/// A lab store's URL that cannot be used, with what to write instead.
public enum LabAddressError: Error, Equatable, CustomStringConvertible {
    /// `shown` is the URL up to the user: the rest holds the password and is never repeated.
    case passwordInURL(shown: String)
    case badURL(url: String, problem: String)

    public var description: String {
        switch self {
        case .passwordInURL(let shown):
            "the lab store's URL \(shown): a URL carrying a password is refused (it would sit in `ps` and the "
                + "shell's history): drop it from the URL and put it in ~/.pgpass (mode 0600), or use a connection file"
        case .badURL(let url, let problem):
            "the lab store's URL \(url): \(problem) "
                + "(the form: postgres://user@host:port/database?sslmode=verify-full&sslrootcert=PATH)"
        }
    }
}

extension LabConnection {
    /// The store a command names: a `postgres://user@host:port/database` URL, or the path of
    /// a connection file (`read(path:)`: `key = value`, mode 0600). A URL never carries the
    /// password (it would sit in `ps` and the shell's history): it is refused, and the password
    /// comes from the password file PostgreSQL's own clients read ($PGPASSFILE, else
    /// ~/.pgpass). A Unix-socket directory is written as the host percent-encoded
    /// (`postgres://reader@%2Frun%2Fpostgresql/lab`), as libpq takes it. The options taken after
    /// `?` are libpq's `sslmode` and `sslrootcert` (`&` between them, percent-encoded values).
    public static func argument(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> LabConnection
    {
        guard let scheme = ["postgres://", "postgresql://"].first(where: { text.hasPrefix($0) }) else {
            return try read(path: text)
        }
        func bad(_ problem: String) -> LabAddressError { .badURL(url: text, problem: problem) }
        let rest = text.dropFirst(scheme.count)
        guard let at = rest.lastIndex(of: "@") else { throw bad("names no user") }
        let userPart = rest[..<at]
        if userPart.contains(":") {
            // The URL itself is not repeated: it holds the password.
            throw LabAddressError.passwordInURL(shown: "\(scheme)\(userPart.prefix { $0 != ":" }):…@…")
        }
        guard let user = String(userPart).removingPercentEncoding, !user.isEmpty else { throw bad("names no user") }
        let afterAt = rest[rest.index(after: at)...]
        guard let slash = afterAt.firstIndex(of: "/") else { throw bad("names no database") }
        let path = afterAt[afterAt.index(after: slash)...]
        let database = String(path.prefix { $0 != "?" })
        guard !database.isEmpty, !database.contains("/") else { throw bad("names no database") }
        var options: [String: String] = [:]
        if let question = path.firstIndex(of: "?") {
            for pair in path[path.index(after: question)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = String(parts[0])
                if key == "password" {
                    throw LabAddressError.passwordInURL(shown: "\(scheme)\(userPart)@…?password=…")
                }
                guard ["sslmode", "sslrootcert"].contains(key) else {
                    throw bad("option `\(key)` is not taken (taken: sslmode, sslrootcert)")
                }
                guard parts.count == 2, let value = String(parts[1]).removingPercentEncoding else {
                    throw bad("option `\(key)` has no value")
                }
                options[key] = value
            }
        }
        let tls = try LabSSLMode.settings(mode: options["sslmode"], rootCertificate: options["sslrootcert"]) {
            bad($0)
        }
        var hostPort = afterAt[..<slash]
        var port = 5432
        if let colon = hostPort.lastIndex(of: ":") {
            let digits = hostPort[hostPort.index(after: colon)...]
            guard let number = Int(digits), (1...65535).contains(number) else {
                throw bad("port `\(digits)` is not a number in 1...65535")
            }
            port = number
            hostPort = hostPort[..<colon]
        }
        guard let host = String(hostPort).removingPercentEncoding, !host.isEmpty else { throw bad("names no host") }
        let password = try passwordFromFile(
            host: host, port: port, database: database, user: user, environment: environment)
        return LabConnection(
            host: host, port: port, database: database, user: user, password: password, sslMode: tls.mode,
            rootCertificate: tls.rootCertificate)
    }

    /// The password for these settings from libpq's password file (`host:port:database:user:password`
    /// lines, `*` matching anything, `\:` and `\\` escaped), or nil when there is none or no line
    /// fits. A file its group or others may read is refused, as for the connection file.
    static func passwordFromFile(host: String, port: Int, database: String, user: String, environment: [String: String])
        throws -> String?
    {
        guard let path = environment["PGPASSFILE"] ?? environment["HOME"].map({ "\($0)/.pgpass" }) else { return nil }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = info.st_mode & 0o777
        if mode & 0o077 != 0 {
            throw LabStoreError.connectionFile(
                path: path,
                problem: "readable by its group or others (mode \(String(mode, radix: 8))) and it holds passwords: "
                    + "chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw LabStoreError.connectionFile(path: path, problem: "cannot be read as text")
        }
        let wanted = [host, String(port), database, user]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = splitEscaped(line)
            guard fields.count == 5 else { continue }
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// Splits a password-file line at unescaped colons, undoing `\:` and `\\`.
    private static func splitEscaped(_ line: Substring) -> [String] {
        var fields: [String] = [""]
        var escaped = false
        for c in line {
            if escaped {
                fields[fields.count - 1].append(c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == ":" {
                fields.append("")
            } else {
                fields[fields.count - 1].append(c)
            }
        }
        return fields
    }
}

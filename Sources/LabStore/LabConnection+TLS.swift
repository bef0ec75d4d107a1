import Foundation
import NIOSSL
import PostgresNIO

/// libpq's `sslmode`, the values the project takes. `prefer` and `allow` are not taken: both
/// may connect without TLS and say nothing, which a station on a network the lab does not own
/// must never do.
public enum LabSSLMode: String, Sendable, CaseIterable {
    /// No TLS: only for a trusted network or a tunnel, chosen knowingly.
    case disable
    /// TLS or no connection; the server's certificate is not checked (unless sslrootcert is
    /// given: then, as libpq, it is checked as for verify-ca).
    case require
    /// TLS, and the server's certificate is signed by the CA in sslrootcert.
    case verifyCA = "verify-ca"
    /// verify-ca, and the certificate names the host connected to.
    case verifyFull = "verify-full"

    static let accepted = allCases.map(\.rawValue).joined(separator: ", ")

    /// Checks the settings' `sslmode` and `sslrootcert` as written in a connection file or a
    /// URL (an empty value is no value); a problem is one sentence naming the key or the path,
    /// which the caller wraps in its own error (naming the file or the URL).
    static func settings(mode text: String?, rootCertificate path: String?, problem: (String) -> any Error)
        throws -> (mode: LabSSLMode?, rootCertificate: String?)
    {
        let text = text.flatMap { $0.isEmpty ? nil : $0 }
        let path = path.flatMap { $0.isEmpty ? nil : $0 }
        var mode: LabSSLMode?
        if let text {
            guard let known = LabSSLMode(rawValue: text) else {
                if text == "prefer" || text == "allow" {
                    throw problem(
                        "sslmode `\(text)` is not taken: it may connect without TLS and say nothing; write "
                            + "require (TLS or no connection) or verify-full, or disable to go without TLS knowingly "
                            + "(taken: \(accepted))")
                }
                throw problem("sslmode `\(text)` is not one of \(accepted)")
            }
            mode = known
        }
        if mode == .verifyCA || mode == .verifyFull, path == nil {
            throw problem("sslmode `\(text!)` needs sslrootcert, the path of the CA's certificate (PEM)")
        }
        if let path {
            if let failure = certificateProblem(path) { throw problem("sslrootcert \(path): \(failure)") }
        }
        return (mode, path)
    }

    /// Why the CA's certificate file cannot be used, or nil when it holds a PEM certificate.
    static func certificateProblem(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        close(descriptor)
        guard let certificates = try? NIOSSLCertificate.fromPEMFile(path), !certificates.isEmpty else {
            return "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        }
        return nil
    }
}

extension LabConnection {
    /// Whether the store is reached over its Unix socket (no TLS there, as with libpq).
    var isSocket: Bool { host.hasPrefix("/") }

    /// The sslmode a TCP connection uses: the settings', else the project's default, require
    /// (libpq's default, prefer, may fall back to no TLS and say nothing).
    public var effectiveSSLMode: LabSSLMode { isSocket ? .disable : (sslMode ?? .require) }

    /// postgres-nio's TLS for these settings: `.require` whenever TLS is asked for, so a server
    /// without TLS is refused, never used in the clear.
    func tls() throws -> PostgresConnection.Configuration.TLS {
        let mode = effectiveSSLMode
        guard mode != .disable else { return .disable }
        var tls = TLSConfiguration.makeClientConfiguration()
        switch (mode, rootCertificate) {
        case (.verifyFull, _): tls.certificateVerification = .fullVerification
        case (.verifyCA, _), (.require, .some): tls.certificateVerification = .noHostnameVerification
        default: tls.certificateVerification = .none
        }
        if let rootCertificate {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(rootCertificate))
        }
        return .require(try NIOSSLContext(configuration: tls))
    }

    /// What failed in TLS, in one sentence, or nil when `error` is no TLS failure.
    func tlsFailure(_ error: any Error) -> String? {
        guard let psql = error as? PSQLError else { return nil }
        let mode = "sslmode \(effectiveSSLMode.rawValue)"
        if psql.code == .sslUnsupported {
            return "the server does not offer TLS (\(mode)): turn ssl on at the server (docs/lab.md), "
                + "or write sslmode = disable to go without TLS knowingly"
        }
        guard let underlying = psql.underlying else { return nil }
        if let extra = underlying as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return "TLS: the server's certificate does not name the host \(host) (\(mode))"
        }
        guard let ssl = underlying as? NIOSSLError else { return nil }
        if case .handshakeFailed(let failure) = ssl, "\(failure)".contains("CERTIFICATE_VERIFY_FAILED") {
            // BoringSSL says only that the check failed, not which part of it.
            return "TLS: the server's certificate is not signed by the CA in sslrootcert "
                + "\(rootCertificate ?? "(none)"), or is out of date (\(mode))"
        }
        return "TLS failed (\(mode)): \(ssl)"
    }
}

import Foundation
import LabStore
import LabWeb
import LineupBench
import SessionLog
import Testing
import WebAccounts

/// A connection file of `lines`, mode 0600, in `directory`.
private func connectionFile(_ lines: [String], in directory: String, name: String = "lab.conf") -> String {
    let path = "\(directory)/\(name)"
    FileManager.default.createFile(
        atPath: path, contents: Data((lines.joined(separator: "\n") + "\n").utf8),
        attributes: [.posixPermissions: 0o600])
    return path
}

/// The lines of a connection file for `c`, with its TLS settings.
private func lines(_ c: LabConnection) -> [String] {
    [
        "host = \(c.host)", "port = \(c.port)", "database = \(c.database)", "user = \(c.user)",
        "password = \(c.password!)",
    ]
        + (c.sslMode.map { ["sslmode = \($0.rawValue)"] } ?? [])
        + (c.rootCertificate.map { ["sslrootcert = \($0)"] } ?? [])
}

private func temporaryDirectory(_ name: String) throws -> String {
    let directory = NSTemporaryDirectory() + "\(name)-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return directory
}

/// The error `body` throws, as a person reads it ("" when it throws none).
private func message(_ body: () throws -> Void) -> String {
    do {
        try body()
        return ""
    } catch {
        return "\(error)"
    }
}

/// sslmode and sslrootcert as the connection file and the URL take them: no server needed.
@Suite(.ownThreads) struct LabTLSSettingsTests {
    /// A CA's certificate made by `openssl` (any PEM certificate will do here).
    func authority(in directory: String) throws -> String {
        let path = "\(directory)/ca.crt"
        let child = try Child([
            "/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "\(directory)/ca.key", "-out", path, "-days", "1", "-subj", "/CN=lineup test ca",
        ])
        let status = try child.wait(within: .seconds(60), for: "openssl req")
        guard status == 0 else { throw TestServerError(message: "openssl req failed: \(child.stderr())") }
        return path
    }

    @Test func theConnectionFileTakesSSLModeAndTheCAsCertificate() throws {
        let directory = try temporaryDirectory("lab-tls")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ca = try authority(in: directory)
        let base = ["host = db.example", "database = lab", "user = station_a"]
        let full = try LabConnection.read(
            path: connectionFile(base + ["sslmode = verify-full", "sslrootcert = \(ca)"], in: directory))
        #expect(full.sslMode == .verifyFull && full.rootCertificate == ca)
        #expect(full.effectiveSSLMode == .verifyFull)
        for mode in LabSSLMode.allCases {
            let read = try LabConnection.read(
                path: connectionFile(base + ["sslmode = \(mode.rawValue)", "sslrootcert = \(ca)"], in: directory))
            #expect(read.sslMode == mode)
        }
        // The project's default over TCP is require; a Unix socket never uses TLS (as libpq).
        let plain = try LabConnection.read(path: connectionFile(base, in: directory))
        #expect(plain.sslMode == nil && plain.effectiveSSLMode == .require)
        let socket = try LabConnection.read(
            path: connectionFile(
                [
                    "host = /run/postgresql", "database = lab", "user = r", "sslmode = verify-full",
                    "sslrootcert = \(ca)",
                ],
                in: directory))
        #expect(socket.effectiveSSLMode == .disable)
    }

    @Test func aBadSSLModeOrCAIsRefusedInOneLineNamingIt() throws {
        let directory = try temporaryDirectory("lab-tls")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ca = try authority(in: directory)
        let base = ["host = db.example", "database = lab", "user = station_a"]
        func refusal(_ extra: [String]) -> (path: String, message: String) {
            let path = connectionFile(base + extra, in: directory)
            return (path, message { _ = try LabConnection.read(path: path) })
        }
        var (path, said) = refusal(["sslmode = verify-fll", "sslrootcert = \(ca)"])
        #expect(
            said
                == "connection file \(path): sslmode `verify-fll` is not one of disable, require, verify-ca, verify-full"
        )
        (path, said) = refusal(["sslmode = prefer"])
        #expect(said.hasPrefix("connection file \(path): sslmode `prefer` is not taken: it may connect without TLS"))
        #expect(said.hasSuffix("(taken: disable, require, verify-ca, verify-full)"))
        (path, said) = refusal(["sslmode = allow"])
        #expect(said.contains("sslmode `allow` is not taken"))
        (path, said) = refusal(["sslmode = verify-full"])
        #expect(
            said
                == "connection file \(path): sslmode `verify-full` needs sslrootcert, the path of the CA's certificate (PEM)"
        )
        (path, said) = refusal(["sslmode = verify-ca", "sslrootcert = \(directory)/no-such-ca.crt"])
        #expect(said == "connection file \(path): sslrootcert \(directory)/no-such-ca.crt: No such file or directory")
        let notPEM = connectionFile(["not a certificate"], in: directory, name: "not.pem")
        (path, said) = refusal(["sslmode = verify-full", "sslrootcert = \(notPEM)"])
        #expect(
            said
                == "connection file \(path): sslrootcert \(notPEM): holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        )
        (path, said) = refusal(["sslcert = \(ca)"])
        #expect(said.contains("unknown key `sslcert`") && said.contains("sslmode, sslrootcert"))
        for said in [said] { #expect(!said.contains("\n")) }

        // lineupctl says it in one line, and nothing on stdout.
        let run = try lineupctl(["stats", "--lab", connectionFile(base + ["sslmode = verify-fll"], in: directory)])
        #expect(run.status == 1 && run.stdout.isEmpty)
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        #expect(run.stderr.contains("sslmode `verify-fll` is not one of"), "\(run.stderr)")
    }

    @Test func theURLTakesSSLModeAndSSLRootCertAsOptions() throws {
        let directory = try temporaryDirectory("lab-tls")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ca = try authority(in: directory)
        let encoded = ca.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let url = "postgres://reader_r@db.example:5433/lab?sslmode=verify-full&sslrootcert=\(encoded)"
        let read = try LabConnection.argument(url, environment: [:])
        #expect(
            read
                == LabConnection(
                    host: "db.example", port: 5433, database: "lab", user: "reader_r",
                    password: nil, sslMode: .verifyFull, rootCertificate: ca))
        // libpq takes the path unencoded too.
        let unencoded = try LabConnection.argument(
            "postgres://reader_r@db.example/lab?sslmode=verify-ca&sslrootcert=\(ca)", environment: [:])
        #expect(unencoded.sslMode == .verifyCA && unencoded.rootCertificate == ca && unencoded.database == "lab")
        #expect(try LabConnection.argument("postgres://r@db.example/lab", environment: [:]).sslMode == nil)
        #expect(
            try LabConnection.argument("postgres://r@db.example/lab?sslmode=require", environment: [:]).sslMode
                == .require)

        func said(_ url: String) -> String { message { _ = try LabConnection.argument(url, environment: [:]) } }
        let form = "(the form: postgres://user@host:port/database?sslmode=verify-full&sslrootcert=PATH)"
        var url2 = "postgres://r@db.example/lab?sslmode=bogus"
        #expect(
            said(url2)
                == "the lab store's URL \(url2): sslmode `bogus` is not one of disable, require, verify-ca, verify-full \(form)"
        )
        url2 = "postgres://r@db.example/lab?sslmode=verify-ca&sslrootcert=/no/such/ca.crt"
        #expect(
            said(url2) == "the lab store's URL \(url2): sslrootcert /no/such/ca.crt: No such file or directory \(form)")
        url2 = "postgres://r@db.example/lab?connect_timeout=3"
        #expect(said(url2).contains("option `connect_timeout` is not taken (taken: sslmode, sslrootcert)"))
        // A password as an option is refused like one before the host, and not repeated.
        let secret = said("postgres://r@db.example/lab?password=s3cret")
        #expect(secret.contains("a URL carrying a password is refused") && !secret.contains("s3cret"))
    }
}

/// TLS to the lab store against a real PostgreSQL with TLS of its own (TestServer's `tls`): a
/// CA, a certificate for `localhost` signed by it, another CA, and TCP only with TLS
/// (`hostssl`). One server for every case: each is a connection, not a server.
@Suite(.serialized, .timeLimit(.minutes(5)), .ownThreads) struct LabTLSTests {
    /// `c` over TCP to `host` with these TLS settings.
    func over(_ c: LabConnection, host: String = "localhost", _ mode: LabSSLMode?, _ root: String? = nil)
        -> LabConnection
    {
        var c = c
        c.host = host
        c.sslMode = mode
        c.rootCertificate = root
        return c
    }

    /// What connecting says: "connected", or the error as a person reads it.
    func connecting(_ c: LabConnection) async -> String {
        do {
            let store = try await LabStore.connect(c)
            await store.close()
            return "connected"
        } catch {
            return "\(error)"
        }
    }

    /// Whether the connection is encrypted, as the server sees it.
    let encrypted = "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()"

    @Test func theStoreIsReachedOverTLSAndItsCertificateChecked() async throws {
        guard let server = try await TestServer.startOrSkip("theStoreIsReachedOverTLS", tls: true) else { return }
        let ca = server.certificates!.authority
        let otherCA = server.certificates!.otherAuthority
        let lab = try await server.makeLab()
        let reader = lab.researcher
        func cannot(_ host: String, _ reason: String) -> String {
            "the lab store reader_r@\(host):\(server.port)/lab cannot be reached: " + reason
        }

        // Encrypted, as pg_stat_ssl says, in every mode that asks for TLS.
        #expect(try await value(encrypted, as: over(reader, .verifyFull, ca)) == "true")
        #expect(try await value(encrypted, as: over(reader, host: "127.0.0.1", .verifyCA, ca)) == "true")
        #expect(try await value(encrypted, as: over(reader, .require)) == "true")
        // The project's default over TCP: TLS, the certificate unchecked.
        #expect(try await value(encrypted, as: over(reader, nil)) == "true")
        // The Unix socket: no TLS, as libpq.
        #expect(try await value(encrypted, as: reader) == "false")

        // The certificate is checked: another CA, and a host the certificate does not name.
        #expect(
            await connecting(over(reader, .verifyFull, otherCA))
                == cannot(
                    "localhost",
                    "TLS: the server's certificate is not signed by the CA in sslrootcert \(otherCA), or is out of date (sslmode verify-full)"
                ))
        #expect(
            await connecting(over(reader, .verifyCA, otherCA))
                == cannot(
                    "localhost",
                    "TLS: the server's certificate is not signed by the CA in sslrootcert \(otherCA), or is out of date (sslmode verify-ca)"
                ))
        #expect(
            await connecting(over(reader, host: "127.0.0.1", .verifyFull, ca))
                == cannot(
                    "127.0.0.1", "TLS: the server's certificate does not name the host 127.0.0.1 (sslmode verify-full)")
        )
        // require with a CA checks it, as libpq's does.
        #expect(await connecting(over(reader, .require, otherCA)).contains("is not signed by the CA in sslrootcert"))
        // Without TLS the server's hostssl lines refuse the login.
        let plain = await connecting(over(reader, .disable))
        #expect(plain.contains("no pg_hba.conf entry") && plain.contains("no encryption"), "\(plain)")

        // A station syncs over verify-full with lineup-sync, and `stats --lab` over verify-full
        // (a file, then a URL) prints what `stats --db` prints on the same log.
        let directory = try temporaryDirectory("lab-tls")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = "\(directory)/lineup.db"
        var filler = LogFiller()
        filler.dogs = 2
        filler.sessionsPerDog = 2
        filler.trialsPerSession = 10
        filler.eventsPerTrial = 4
        filler.seed = 23
        _ = try filler.fill(try SessionLog(path: log))
        let stationFile = connectionFile(lines(over(lab.station, .verifyFull, ca)), in: directory, name: "station.conf")
        let sync = try runSync(["--log", log, "--connection", stationFile, "--once"])
        #expect(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
        #expect(sync.stdout.contains("behind: 0 rows"), "\(sync.stdout)")
        let merged = "\(directory)/merged.db"
        #expect(try lineupctl(["merge", log, "--into", merged]).status == 0)
        let onLog = try lineupctl(["stats", "--by", "dog", "--db", merged])
        let readerFile = connectionFile(lines(over(reader, .verifyFull, ca)), in: directory, name: "reader.conf")
        let onLab = try lineupctl(["stats", "--by", "dog", "--lab", readerFile])
        #expect(onLog.status == 0 && onLab.status == 0, "\(onLog.stderr)\(onLab.stderr)")
        #expect(onLab.stdout == onLog.stdout && !onLab.stdout.isEmpty, "\(onLab.stdout)")
        let passfile = connectionFile(["*:\(server.port):lab:reader_r:reader-pw"], in: directory, name: "pgpass")
        let url =
            "postgres://reader_r@localhost:\(server.port)/lab?sslmode=verify-full&sslrootcert="
            + ca.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let byURL = try lineupctl(["stats", "--by", "dog", "--lab", url], environment: ["PGPASSFILE": passfile])
        #expect(byURL.status == 0 && byURL.stdout == onLog.stdout, "\(byURL.stderr)")
        let wrongCA = connectionFile(lines(over(reader, .verifyFull, otherCA)), in: directory, name: "wrong.conf")
        let refused = try lineupctl(["stats", "--lab", wrongCA])
        #expect(refused.status == 1 && refused.stdout.isEmpty)
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("is not signed by the CA in sslrootcert \(otherCA)"), "\(refused.stderr)")

        // The lab's page reads the store with the same settings: the sync's heartbeat over
        // verify-full, and the other CA refused.
        let users = try UserStore(path: "\(directory)/users.db", create: true, cost: 4)
        let page = try await LabPage.stations(LabState(users: users, connection: over(reader, .verifyFull, ca)))
        #expect(page.stations.count == 1, "\(page.stations)")
        do {
            _ = try await LabPage.stations(LabState(users: users, connection: over(reader, .verifyFull, otherCA)))
            Issue.record("the lab's page read the store through a certificate another CA signed")
        } catch {
            #expect("\(error)".contains("is not signed by the CA in sslrootcert \(otherCA)"), "\(error)")
        }

        // A server without TLS: never used in the clear when TLS was asked for.
        try await server.setSSL(false)
        func noTLS(_ mode: String) -> String {
            "the server does not offer TLS (sslmode \(mode)): turn ssl on at the server (docs/lab.md), "
                + "or write sslmode = disable to go without TLS knowingly"
        }
        #expect(await connecting(over(reader, .require)) == cannot("localhost", noTLS("require")))
        #expect(await connecting(over(reader, .verifyFull, ca)) == cannot("localhost", noTLS("verify-full")))
        #expect(await connecting(over(reader, nil)) == cannot("localhost", noTLS("require")))
        let resync = try runSync(["--log", log, "--connection", stationFile, "--once"])
        #expect(resync.status != 0)
        #expect(resync.stderr.contains("the server does not offer TLS (sslmode verify-full)"), "\(resync.stderr)")
    }
}

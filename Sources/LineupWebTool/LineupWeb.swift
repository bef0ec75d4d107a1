import ArgumentParser
import Foundation
import Hummingbird
import SessionLog
import StationControl
import StationWeb
import WebAccounts

/// `lineup-web`: the station's page. The only part of the station with a network listener;
/// it controls lineupd over its control socket, like lineupctl, as a member of its group.
struct LineupWeb: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lineup-web",
        abstract: "Serve the station's page: the live session for the trainer and the loading assistant.",
        discussion: """
            Listens on \(WebServer.defaultHost):\(WebServer.defaultPort) unless told (every interface, so a phone on the
            station's network reaches it; 8080 needs no root). Accounts are made on the station with
            lineupctl web user add NAME --role admin; there is no default password. docs/web.md.
            """)

    @Option(help: "The address to listen on.")
    var host = WebServer.defaultHost

    @Option(help: "The port to listen on.")
    var port = WebServer.defaultPort

    @Option(
        help: ArgumentHelp(
            "lineupd's control socket (default: $\(ControlProtocol.socketEnvironmentVariable), else \(ControlProtocol.defaultSocketPath)).",
            valueName: "path"))
    var socket: String?

    @Option(
        help: ArgumentHelp(
            "The accounts file (default: $\(UserStore.environmentVariable), else \(UserStore.defaultPath)).",
            valueName: "path"))
    var users: String?

    @Option(
        help: ArgumentHelp(
            "The session log, read-only, for the dogs, samples and researcher's screens (default: $LINEUP_DB, else \(SessionLog.defaultPath)).",
            valueName: "path"))
    var db: String?

    @Option(help: "Connections open at once, in all (docs/web.md, \"What an attacker on the network can do\").")
    var maxConnections = ConnectionLimits().total

    @Option(help: "Connections open at once from one client address (raise it behind a reverse proxy).")
    var maxConnectionsPerAddress = ConnectionLimits().perAddress

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port must be 1 to 65535") }
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1") }
        guard maxConnectionsPerAddress >= 1 else {
            throw ValidationError("--max-connections-per-address must be at least 1")
        }
    }

    func run() async throws {
        let store: UserStore
        do {
            store = try UserStore(path: UserStore.path(option: users), create: false)
        } catch {
            FileHandle.standardError.write(Data("lineup-web: \(error.description)\n".utf8))
            throw ExitCode(1)
        }
        let link = SocketLink(path: ControlClient.path(option: socket))
        let state = WebState(users: store, link: link, logPath: db ?? SessionLog.pathFromEnvironment)
        var limits = ConnectionLimits(total: maxConnections, perAddress: maxConnectionsPerAddress)
        let descriptors = DescriptorBudget.raise(toFit: limits.total)
        if descriptors.connections < limits.total {
            FileHandle.standardError.write(
                Data(
                    ("lineup-web: only \(descriptors.limit) open files are allowed (LimitNOFILE): at most "
                        + "\(descriptors.connections) connections, not \(limits.total)\n").utf8))
            limits.total = descriptors.connections
        }
        let app = WebServer.application(state: state, host: host, port: port, limits: limits)
        FileHandle.standardError.write(Data("lineup-web: serving http://\(host):\(port)/\n".utf8))
        do {
            try await app.runService()
        } catch {
            FileHandle.standardError.write(Data("lineup-web: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

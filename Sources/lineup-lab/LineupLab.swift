import ArgumentParser
import Foundation
import Hummingbird
import LabStore
import LabWeb
import StationWeb
import WebAccounts

/// `lineup-lab`: the lab's page, on the lab's server: every station's newest heartbeat from the
/// lab store, read with a researcher's login, behind the station page's accounts and guards.
@main
struct LineupLab: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lineup-lab",
        abstract: "Serve the lab's page: every station, reachable or last seen, its session, faults, disk and sync.",
        discussion: """
            Listens on \(LabPage.defaultHost):\(LabPage.defaultPort) unless told. The store is read through a
            connection file (key = value: host, port, database, user, password; mode 0600) whose user is
            in the role lineup_researcher. Accounts are made with lineupctl web user add NAME --role ROLE
            --users FILE; there is no default password. docs/lab.md, "The lab's page".
            """)

    @Option(help: "The address to listen on.")
    var host = LabPage.defaultHost

    @Option(help: "The port to listen on.")
    var port = LabPage.defaultPort

    @Option(help: "The connection file for a researcher's login to the lab store (mode 0600).")
    var connection = "/etc/lineup/lab-page.conf"

    @Option(help: ArgumentHelp("The accounts file.", valueName: "path"))
    var users = "/var/lib/lineup-lab/users.db"

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port must be 1 to 65535") }
    }

    func run() async throws {
        let settings: LabConnection
        let store: UserStore
        do {
            settings = try LabConnection.read(path: connection)
            store = try UserStore(path: users, create: false)
        } catch let error as LabStoreError {
            fail(error.description)
        } catch let error as UserStoreError {
            // The lab page's accounts are its own file, not the station page's default.
            fail("\(error.description); for the lab's page, with --users \(users)")
        }
        let app = LabPage.application(
            state: LabState(users: store, connection: settings), host: host, port: port)
        FileHandle.standardError.write(Data("lineup-lab: serving http://\(host):\(port)/\n".utf8))
        do {
            try await app.runService()
        } catch {
            fail("\(error)")
        }
    }

    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("lineup-lab: \(message)\n".utf8))
        Foundation.exit(1)
    }
}

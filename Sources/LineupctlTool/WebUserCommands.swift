import ArgumentParser
import Foundation
import WebAccounts

// `lineupctl web user list|remove|passwd`: the rest of an account's life. lineup-web checks the
// account on every request and every live-stream frame, so a removal or a new password ends
// that user's open pages within a second, without restarting lineup-web.

/// The accounts-file option every `web user` command shares.
struct UsersFileOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The accounts file (default: $\(UserStore.environmentVariable), else \(UserStore.defaultPath)).",
            valueName: "path"))
    var users: String?

    /// The existing accounts file; a missing one is an error (these commands never create it).
    func store() throws(UserStoreError) -> UserStore {
        try UserStore(path: UserStore.path(option: users), create: false)
    }
}

struct WebUserList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the accounts of the station's page: name, role, when made.")

    @OptionGroup var file: UsersFileOption
    @Flag(help: "One JSON array instead of the table.") var json = false

    func run() throws {
        do {
            let users = try file.store().list()
            if json {
                let rows = users.map { ["name": $0.name, "role": $0.role, "created": $0.created] }
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(rows), as: UTF8.self))
                return
            }
            if users.isEmpty {
                print("No accounts (make the first: lineupctl web user add NAME --role admin).")
                return
            }
            let width = max(4, users.map(\.name.count).max() ?? 0)
            print("name".padding(toLength: width, withPad: " ", startingAt: 0) + "  role        created")
            for user in users {
                print(
                    user.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                        + user.role.padding(toLength: 10, withPad: " ", startingAt: 0) + "  " + user.created)
            }
        } catch let error as UserStoreError {
            printError(error.description)
            throw ExitCode(1)
        }
    }
}

struct WebUserRemove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove an account; its open pages in lineup-web are logged out within a second.")

    @Argument(help: "The account's name.") var name: String
    @OptionGroup var file: UsersFileOption

    func run() throws {
        do {
            let store = try file.store()
            try store.remove(name: name)
            print("Removed \(name) from \(store.path).")
        } catch let error as UserStoreError {
            printError(error.description)
            throw ExitCode(1)
        }
    }
}

struct WebUserPasswd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Set an account's password; its open pages in lineup-web are logged out within a second.",
        discussion: """
            The same rules as web user add: at least \(UserStore.minimumPassword) characters, at most \
            \(UserStore.maximumPasswordBytes) bytes, asked twice without echo; --password-stdin reads one line \
            from standard input instead.
            """)

    @Argument(help: "The account's name.") var name: String
    @OptionGroup var file: UsersFileOption
    @Flag(help: "Read the password from standard input (one line) instead of the terminal.")
    var passwordStdin = false

    func run() throws {
        do {
            let store = try file.store()
            // Refuse an unknown name before asking for a password it would never get.
            guard try store.user(named: name) != nil else { throw UserStoreError.noSuchUser(name) }
            let password = try passwordStdin ? readPasswordLine() : askPasswordTwice(for: name)
            try store.setPassword(name: name, password: password)
            print("Changed the password of \(name) in \(store.path).")
        } catch let error as UserStoreError {
            printError(error.description)
            throw ExitCode(1)
        } catch let error as PasswordInputError {
            printError(error.description)
            throw ExitCode(1)
        }
    }
}

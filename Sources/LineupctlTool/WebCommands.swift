import ArgumentParser
import Foundation
import Glibc
import WebAccounts

// `lineupctl web`: the station page's accounts, made on the station itself. There is no
// default password: the first account (an admin) is made here, by someone at the station's
// shell, and lineup-web answers nothing but its login page until one exists.

struct WebCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "The station's page (lineup-web): its accounts.",
        subcommands: [WebUserCommand.self])
}

struct WebUserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Accounts of the station's page.",
        subcommands: [WebUserAdd.self, WebUserList.self, WebUserRemove.self, WebUserPasswd.self])
}

struct WebUserAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add an account to the station's page; the password is asked on the terminal.",
        discussion: """
            Roles: trainer (the handler: runs sessions; never sees a double-blind layout),
            assistant (the loading assistant: sees what to load where, presses "loaded"),
            researcher (reads only), admin (a trainer who may also manage the page).
            The password (at least \(UserStore.minimumPassword) characters) is asked twice without echo;
            --password-stdin reads one line from standard input instead, for scripts.
            The accounts file is created mode 0600 for the user running this command:
            run it as lineup-web's user on a station (docs/web.md).
            """)

    @Argument(help: "The account's name: 1 to 32 letters, digits, '.', '-' or '_'.")
    var name: String

    @Option(
        help: ArgumentHelp("trainer, assistant, researcher, admin or handler (docs/web.md, \"Accounts and roles\")."))
    var role: String

    @Option(
        help: ArgumentHelp(
            "The accounts file (default: $\(UserStore.environmentVariable), else \(UserStore.defaultPath)).",
            valueName: "path"))
    var users: String?

    @Flag(help: "Read the password from standard input (one line) instead of the terminal.")
    var passwordStdin = false

    func run() throws {
        guard let role = WebRole(rawValue: role) else {
            printError(
                "unknown role \"\(role)\": use one of \(WebRole.allCases.map(\.rawValue).joined(separator: ", "))")
            throw ExitCode(1)
        }
        do {
            try UserStore.checkName(name)
            let password = try passwordStdin ? readStdinPassword() : askTwice()
            try UserStore.checkPassword(password)
            let path = UserStore.path(option: users)
            let store = try UserStore(path: path, create: true)
            try store.add(name: name, role: role, password: password)
            print("Added \(role.rawValue) \(name) to \(path).")
        } catch let error as UserStoreError {
            printError(error.description)
            throw ExitCode(1)
        } catch let error as PasswordInputError {
            printError(error.description)
            throw ExitCode(1)
        }
    }

    private func readStdinPassword() throws(PasswordInputError) -> String { try readPasswordLine() }

    private func askTwice() throws(PasswordInputError) -> String { try askPasswordTwice(for: name) }
}

func readPasswordLine() throws(PasswordInputError) -> String {
    guard let line = readLine(strippingNewline: true) else { throw .noInput }
    return line
}

func askPasswordTwice(for name: String) throws(PasswordInputError) -> String {
    let first = try askWithoutEcho("Password for \(name): ")
    let second = try askWithoutEcho("Again: ")
    guard first == second else { throw .mismatch }
    return first
}

/// Reads a line from the terminal with echo off, restoring the terminal whatever happens.
private func askWithoutEcho(_ prompt: String) throws(PasswordInputError) -> String {
    let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
    guard fd >= 0 else { throw .noTerminal }
    defer { close(fd) }
    var saved = termios()
    guard tcgetattr(fd, &saved) == 0 else { throw .noTerminal }
    var quiet = saved
    quiet.c_lflag &= ~tcflag_t(ECHO)
    _ = prompt.withCString { write(fd, $0, strlen($0)) }
    tcsetattr(fd, TCSAFLUSH, &quiet)
    defer {
        tcsetattr(fd, TCSAFLUSH, &saved)
        _ = write(fd, "\n", 1)
    }
    var bytes: [UInt8] = []
    var byte: UInt8 = 0
    while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") { bytes.append(byte) }
    return String(decoding: bytes, as: UTF8.self)
}

enum PasswordInputError: Error, CustomStringConvertible {
    case noTerminal, noInput, mismatch
    var description: String {
        switch self {
        case .noTerminal: return "no terminal to ask the password on: give it on standard input with --password-stdin"
        case .noInput: return "--password-stdin: standard input ended before a password line"
        case .mismatch: return "the two passwords differ: nothing was changed"
        }
    }
}

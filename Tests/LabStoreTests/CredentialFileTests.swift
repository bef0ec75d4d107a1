import Foundation
import Glibc
import Testing

@testable import LabStore

/// The connection file as systemd's `LoadCredential=` hands it to lineup-sync.service: a
/// root-owned file of mode 0400 with an ACL entry for the service's user (systemd's
/// `write_credential`), which `stat` shows as mode 440.
@Suite(.ownThreads) struct CredentialFileTests {
    static let text = "host = /nonexistent-lineup-store\ndatabase = lab\nuser = station_a\npassword = cred-secret-pw\n"

    func scratch() throws -> String {
        let directory = NSTemporaryDirectory() + "credential-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Sets a path's access ACL as setfacl(1) and systemd do: the `system.posix_acl_access`
    /// attribute (getxattr's sibling, also missing from Swift's Glibc module).
    func setACL(_ path: String, _ entries: [AccessACL.Entry]) throws {
        typealias SetXattr =
            @convention(c) (
                UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeRawPointer?, Int, Int32
            ) -> Int32
        let setxattr = unsafeBitCast(
            try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setxattr")), to: SetXattr.self)
        let bytes = AccessACL(entries: entries).bytes
        let result = bytes.withUnsafeBytes { setxattr(path, "system.posix_acl_access", $0.baseAddress, $0.count, 0) }
        #expect(result == 0, "setxattr \(path): \(String(cString: strerror(errno)))")
    }

    static let none = UInt32.max

    /// systemd's credential for `user`: owner r, the user r, no group, mask r, no others.
    func credentialACL(user: UInt32, permissions: UInt16 = 4) -> [AccessACL.Entry] {
        [
            .init(tag: AccessACL.userObject, permissions: 4, id: Self.none),
            .init(tag: AccessACL.user, permissions: permissions, id: user),
            .init(tag: AccessACL.groupObject, permissions: 0, id: Self.none),
            .init(tag: AccessACL.mask, permissions: 4, id: Self.none),
            .init(tag: AccessACL.other, permissions: 0, id: Self.none),
        ]
    }

    func writeCredential(_ path: String) throws {
        #expect(FileManager.default.createFile(atPath: path, contents: Data(Self.text.utf8)))
        chmod(path, 0o400)
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o777
    }

    @Test func systemdsCredentialIsReadByItsUserAndRefusedToAnyoneElse() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/lab-store.conf"
        try writeCredential(path)
        let service: UInt32 = 64_001
        try setACL(path, credentialACL(user: service))
        // As stat shows it: the mask in the group bits (measured here, as on systemd's tmpfs).
        #expect(mode(path) == 0o440)

        let read = try LabConnection.read(path: path, reader: uid_t(service))
        #expect(read.user == "station_a" && read.password == "cred-secret-pw")

        // Another user named in the ACL may read it: refused, as a 0640 file is.
        #expect(throws: LabStoreError.self) { try LabConnection.read(path: path, reader: 64_002) }
        do {
            _ = try LabConnection.read(path: path, reader: 64_002)
        } catch {
            #expect(
                "\(error)"
                    == "connection file \(path): readable by its group or others (mode 440) and it holds the lab store's password: chmod 600 \(path)"
            )
        }
    }

    @Test func anACLThatLetsAGroupOrAnotherUserInIsRefused() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service: UInt32 = 64_001
        let cases: [(String, [AccessACL.Entry])] = [
            // The owning group may read.
            (
                "owning group",
                [
                    .init(tag: AccessACL.userObject, permissions: 6, id: Self.none),
                    .init(tag: AccessACL.user, permissions: 4, id: service),
                    .init(tag: AccessACL.groupObject, permissions: 4, id: Self.none),
                    .init(tag: AccessACL.mask, permissions: 4, id: Self.none),
                    .init(tag: AccessACL.other, permissions: 0, id: Self.none),
                ]
            ),
            // A named group may read.
            ("named group", credentialACL(user: service) + [.init(tag: AccessACL.group, permissions: 4, id: 64_010)]),
            // Another named user, beside the service's.
            ("another user", credentialACL(user: service) + [.init(tag: AccessACL.user, permissions: 4, id: 64_003)]),
        ]
        for (name, entries) in cases {
            let path = directory + "/\(name.replacingOccurrences(of: " ", with: "-")).conf"
            try writeCredential(path)
            // The kernel wants entries in tag order, and by id within a tag.
            try setACL(path, entries.sorted { ($0.tag, $0.id) < ($1.tag, $1.id) })
            #expect(throws: LabStoreError.self, "\(name)") {
                try LabConnection.read(path: path, reader: uid_t(service))
            }
        }
        // Masked off, a group entry grants nothing: chmod 600 on such a file (the refusal's
        // advice) sets the mask to nothing, and the file is the owner's alone.
        let masked = directory + "/masked.conf"
        try writeCredential(masked)
        try setACL(masked, cases[1].1.sorted { ($0.tag, $0.id) < ($1.tag, $1.id) })
        chmod(masked, 0o600)
        #expect(mode(masked) == 0o600)
        #expect(try #require(LabConnection.accessACL(path: masked)).entries.contains { $0.tag == AccessACL.group })
        #expect(try LabConnection.read(path: masked, reader: 64_002).user == "station_a")
        // Group bits without an ACL are the group's.
        let plain = directory + "/plain.conf"
        try writeCredential(plain)
        chmod(plain, 0o440)
        #expect(throws: LabStoreError.self) { try LabConnection.read(path: plain, reader: uid_t(service)) }
    }

    /// The built lineup-sync run as another user (nobody) with a credential made as systemd
    /// makes it for that user, in a directory as systemd makes it (root's, 0500, an ACL entry
    /// for the user): it takes the file and goes on to the store (unreachable here: exit 1),
    /// where before it refused it as readable by its group (exit 2).
    @Test(
        .enabled(
            if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/sbin/runuser")
                && getpwnam("nobody") != nil, "needs root, runuser and the user nobody"))
    func lineupSyncTakesSystemdsCredentialAsTheServicesUser() throws {
        let nobody = UInt32(getpwnam("nobody")!.pointee.pw_uid)
        // A log nobody may read: lineup-sync opens it before it connects.
        let (directory, log) = try LabStoreTests().stationLog()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o755)
        chmod(log, 0o644)
        let credentials = directory + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        let path = credentials + "/lab-store.conf"
        try writeCredential(path)
        try setACL(path, credentialACL(user: nobody))
        chmod(credentials, 0o500)
        try setACL(
            credentials,
            [
                .init(tag: AccessACL.userObject, permissions: 5, id: Self.none),
                .init(tag: AccessACL.user, permissions: 5, id: nobody),
                .init(tag: AccessACL.groupObject, permissions: 0, id: Self.none),
                .init(tag: AccessACL.mask, permissions: 5, id: Self.none),
                .init(tag: AccessACL.other, permissions: 0, id: Self.none),
            ])
        let sync = try #require(lineupSyncPath(), "lineup-sync is not built: run `swift build` before `swift test`")
        let child = try Child(
            [
                "/sbin/runuser", "-u", "nobody", "--", sync, "--once", "--log", log, "--connection", path,
                "--socket", directory + "/no-lineupd.sock",
            ])
        let status = try child.wait(within: .seconds(60), for: "lineup-sync as nobody")
        let (out, err) = (child.stdout(), child.stderr())
        #expect(status == 1, "\(out)\(err)")
        #expect(!err.contains("connection file"), "\(err)")
        #expect(out.contains("cannot be reached") && out.contains("station_a@/nonexistent-lineup-store"), "\(out)")
        #expect(!out.contains("cred-secret-pw") && !err.contains("cred-secret-pw"))

        // The same file with the ACL entry naming another user: refused, in one line, exit 2.
        try setACL(path, credentialACL(user: nobody + 1))
        let refused = try Child([
            "/sbin/runuser", "-u", "nobody", "--", sync, "--once", "--log", log, "--connection", path,
        ])
        #expect(try refused.wait(within: .seconds(60), for: "lineup-sync as nobody") == 2)
        #expect(
            refused.stderr()
                == "lineup-sync: connection file \(path): readable by its group or others (mode 440) and it holds the lab store's password: chmod 600 \(path)\n"
        )
    }
    /// A log that is not there is named with lineup-sync's own option (`--log`), not lineupctl's.
    @Test func aMissingLogIsNamedWithLineupSyncsOption() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/lab-store.conf"
        try writeCredential(path)
        chmod(path, 0o600)
        let sync = try #require(lineupSyncPath(), "lineup-sync is not built: run `swift build` before `swift test`")
        let child = try Child([sync, "--once", "--log", directory + "/none.db", "--connection", path])
        #expect(try child.wait(within: .seconds(60), for: "lineup-sync without a log") == 2)
        #expect(child.stderr() == "lineup-sync: no session log at \(directory)/none.db (use --log PATH)\n")
    }
}

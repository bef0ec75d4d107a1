import Foundation
import Testing
import WebAccounts

@Suite struct UserStoreTests {
    func path() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("users-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory + "/users.db"
    }

    @Test func passwordsAreKeptAsBcryptHashesInAFileOnlyItsOwnerReads() throws {
        let file = try path()
        let store = try UserStore(path: file, create: true, cost: 4)
        try store.add(name: "ana", role: .admin, password: "correct horse")
        let user = try #require(try store.user(named: "ana"))
        #expect(user.role == .admin)
        #expect(user.passwordHash.hasPrefix("$2b$04$") && !user.passwordHash.contains("correct"))
        #expect(try store.check(name: "ana", password: "correct horse") == user)
        #expect(try store.check(name: "ana", password: "correct hors") == nil)
        #expect(try store.check(name: "bo", password: "correct horse") == nil)
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // Another process's store (lineup-web) sees what lineupctl added.
        #expect(try UserStore(path: file, create: false).count() == 1)
    }

    @Test func badAccountsAreRefusedNamingWhy() throws {
        let store = try UserStore(path: try path(), create: true, cost: 4)
        #expect(throws: UserStoreError.shortPassword(minimum: 10)) {
            try store.add(name: "ana", role: .trainer, password: "short")
        }
        #expect(throws: UserStoreError.badName("a b")) {
            try store.add(name: "a b", role: .trainer, password: "long enough!")
        }
        #expect(throws: UserStoreError.longPassword(maximum: 72)) {
            try store.add(name: "ana", role: .trainer, password: String(repeating: "x", count: 73))
        }
        try store.add(name: "ana", role: .trainer, password: "long enough!")
        #expect(throws: UserStoreError.duplicate("ana")) {
            try store.add(name: "ana", role: .admin, password: "long enough!")
        }
        #expect(throws: UserStoreError.self) { try UserStore(path: "/nonexistent/dir/users.db", create: false) }
    }
}

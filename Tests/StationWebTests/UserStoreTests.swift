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

    /// A name remembers at most `devicesPerName` browsers, the least recently used forgotten
    /// first (docs/web.md, "Remembered browsers").
    @Test func aNameRemembersAtMostTwentyBrowsersTheLeastRecentForgottenFirst() throws {
        let store = try UserStore(path: try path(), create: true, cost: 4)
        try store.add(name: "tom", role: .trainer, password: "tom-the-trainer")
        let count = UserStore.devicesPerName + 1
        for i in 0..<count { try store.rememberDevice(key: "browser-\(i)", name: "tom", now: Double(1000 + i)) }
        #expect(try !store.deviceRemembers(key: "browser-0", name: "tom"))
        for i in 1..<count { #expect(try store.deviceRemembers(key: "browser-\(i)", name: "tom")) }
        // Used again, the second oldest is kept when a new one comes; the next oldest goes.
        try store.rememberDevice(key: "browser-1", name: "tom", now: 5000)
        try store.rememberDevice(key: "browser-new", name: "tom", now: 5001)
        #expect(try store.deviceRemembers(key: "browser-1", name: "tom"))
        #expect(try !store.deviceRemembers(key: "browser-2", name: "tom"))
        #expect(try !store.deviceRemembers(key: "browser-1", name: "ana"), "remembered for tom only")
    }

    /// A name that does not exist costs a bcrypt check at the file's cost, as a wrong password
    /// for one that does: checked by its time against a known name's, the fastest of seven each,
    /// taken in turn (at cost 10 a check takes tens of milliseconds; skipping it would take
    /// microseconds, a thousandth of that: the bound of a tenth leaves room for a busy machine).
    @Test func aNameThatDoesNotExistCostsTheSameCheck() throws {
        let store = try UserStore(path: try path(), create: true, cost: 10)
        try store.add(name: "tom", role: .trainer, password: "tom-the-trainer")
        func seconds(_ name: String) throws -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            #expect(try store.check(name: name, password: "not-the-password") == nil)
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        var known: [Double] = []
        var unknown: [Double] = []
        for _ in 0..<7 {
            known.append(try seconds("tom"))
            unknown.append(try seconds("nobody-\(UUID().uuidString.prefix(6))"))
        }
        let (fastKnown, fastUnknown) = (known.min()!, unknown.min()!)
        print(#"user-store: {"check_known_name_s":\#(fastKnown),"check_unknown_name_s":\#(fastUnknown)}"#)
        #expect(fastUnknown >= fastKnown / 10, "an unknown name took \(fastUnknown) s, a known one \(fastKnown) s")
    }
}

import Foundation
import Glibc
import Testing
import WebAccounts

/// Issue 33's attacks on the page, each against a real `lineup-web` (with the open-file limit
/// of a unit that sets none) and a real `lineupd --simulate --serve`: while each runs, a
/// logged-in trainer's page and its Click must answer. Their times are printed as figures
/// (one JSON line each, `page-under-attack:`), never asserted: the machine is shared.
@Suite(.serialized) struct PageUnderAttackTests {
    static let password = "tom-the-trainer"

    /// An accounts file with the trainer tom, at bcrypt's real cost (10), so a name that does
    /// not exist costs what it costs on a station.
    func users() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("attack-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try UserStore(path: directory + "/users.db", create: true)
        try store.add(name: "tom", role: .trainer, password: Self.password)
        return store.path
    }

    /// lineupd and lineup-web running, tom logged in from 127.0.0.1; `attack` gets them.
    func withPage<T: Sendable>(_ attack: @escaping @Sendable (WebProcess, Browser) throws -> T) async throws -> T? {
        raiseOpenFiles(to: 8192)
        guard let station = try SimulatedStation(extra: ["--no-virtual-dog"]) else { return nil }
        defer { station.terminate() }
        #expect(await station.waitReady())
        guard let web = try WebProcess(station: station, users: try users()) else { return nil }
        defer { web.terminate() }
        return try await onThread { () throws -> T? in
            guard web.waitReady() else {
                Issue.record("lineup-web did not answer on port \(web.port)")
                return nil
            }
            var trainer = Browser(port: web.port)
            guard trainer.login("tom", Self.password)?.status == 200 else {
                Issue.record("tom could not log in before the attack")
                return nil
            }
            return try attack(web, trainer)
        }
    }

    func report(_ attack: String, _ times: PageTimes, _ extra: String) {
        print(
            #"page-under-attack: {"attack":"\#(attack)","page":\#(PageTimes.figures(times.page)),"click":\#(PageTimes.figures(times.click)),\#(extra)}"#
        )
    }

    @Test func fifteenHundredSilentConnectionsLeaveThePageAndClickAnswering() async throws {
        let outcome = try await withPage { web, trainer -> (PageTimes, Int, Int) in
            // The trainer's live page, open before the attack: its stream must keep coming.
            let live = try RawStream(
                port: web.port, path: "/api/events", cookie: trainer.cookieHeader[0].dropFirst(8).description)
            defer { live.close() }
            let cpuBefore = web.cpuSeconds
            let start = Date()
            let attack = SilentConnections(port: web.port, connections: 1500, addresses: 150, net: 2)
            // In place once lineup-web holds as many as it will: its open files steady for two
            // seconds (bounded: a server that never steadies is measured all the same).
            let placed = Date().addingTimeInterval(15)
            var counts: [Int] = []
            while Date() < placed {
                counts.append(web.openFiles)
                if counts.count >= 9, let low = counts.suffix(9).min(), let high = counts.suffix(9).max(),
                    low > 300, high - low <= 10
                {
                    break
                }
                Thread.sleep(forTimeInterval: 0.25)
            }
            let framesBefore = live.frames("status").count
            let times = PageTimes.measure(trainer, rounds: 20)
            // The live page still gets the station's status (every 0.5 s), waited for a bounded time.
            let framed = Date().addingTimeInterval(5)
            while live.frames("status").count == framesBefore && Date() < framed {
                Thread.sleep(forTimeInterval: 0.05)
            }
            let framesDuring = live.frames("status").count - framesBefore
            let seconds = Date().timeIntervalSince(start)
            let cpu = (web.cpuSeconds - cpuBefore) / seconds
            let openFiles = web.openFiles
            let bench = benchClickBesideAttack()
            let reopened = attack.reopened
            let held = attack.open
            attack.stop()
            report(
                "1500 silent connections from 150 addresses", times,
                #""seconds":\#(String(format: "%.1f", seconds)),"lineup_web_cpu":\#(String(format: "%.2f", cpu)),"lineup_web_open_files":\#(openFiles),"attacker_sockets":\#(held),"closed_by_lineup_web_and_reopened":\#(reopened),"live_status_frames":\#(framesDuring)\#(bench.map { #","bench_click":"# + $0 } ?? "")"#
            )
            return (times, framesDuring, reopened)
        }
        guard let (times, frames, _) = outcome else { return }
        #expect(times.page.allSatisfy { $0 != nil }, "the trainer's page went unanswered: \(times.page)")
        #expect(times.click.allSatisfy { $0 != nil }, "the trainer's Click went unanswered: \(times.click)")
        #expect(frames > 0, "the trainer's live page got no status during the attack")
    }

    @Test func aLoginFloodFrom250AddressesLeavesThePageAndClickAnswering() async throws {
        let outcome = try await withPage { web, trainer -> PageTimes in
            let cpuBefore = web.cpuSeconds
            let start = Date()
            let flood = LoginFlood(port: web.port, addresses: 250, net: 3)
            let times = PageTimes.measure(trainer, rounds: 20)
            let seconds = Date().timeIntervalSince(start)
            let cpu = (web.cpuSeconds - cpuBefore) / seconds
            let bench = benchClickBesideAttack()
            flood.stop()
            let statuses = flood.statuses.sorted { $0.key < $1.key }.map { #""\#($0.key)":\#($0.value)"# }
                .joined(separator: ",")
            report(
                "random-name logins from 250 addresses", times,
                #""seconds":\#(String(format: "%.1f", seconds)),"lineup_web_cpu":\#(String(format: "%.2f", cpu)),"flood_answers":{\#(statuses)}\#(bench.map { #","bench_click":"# + $0 } ?? "")"#
            )
            return times
        }
        guard let times = outcome else { return }
        #expect(times.page.allSatisfy { $0 != nil }, "the trainer's page went unanswered: \(times.page)")
        #expect(times.click.allSatisfy { $0 != nil }, "the trainer's Click went unanswered: \(times.click)")
    }

    /// One wrong password a second for "tom" kept tom's right one refused (the name's limit is
    /// shared by every address): tom's own browser, remembered from his last login, must get in
    /// while others hammer his name, from other addresses and from his own.
    @Test func hammeringTomsNameDoesNotKeepTomsBrowserOut() async throws {
        let outcome = try await withPage { web, _ -> [Int] in
            var tom = Browser(port: web.port, address: "127.0.4.1")
            var answers: [Int] = []
            answers.append(tom.login("tom", Self.password)?.status ?? 0)
            let device = tom.cookies["lineup_device"]
            var attackers = 0
            // The 11 browsers at once: a refused login is answered only after a second
            // (WebApp.refusedLoginWait), and one after another they would let the name's
            // bucket refill between rounds.
            func hammer() {
                let sources = (2...11).map { "127.0.4.\($0)" } + ["127.0.4.1"]  // and tom's own address
                let threads = sources.map { source in
                    Thread {
                        var attacker = Browser(port: web.port, address: source)
                        _ = attacker.login("tom", "not-tom's-password")
                    }
                }
                threads.forEach { $0.start() }
                while threads.contains(where: { !$0.isFinished }) { Thread.sleep(forTimeInterval: 0.01) }
                attackers += 10
            }
            for _ in 0..<6 { hammer() }
            // The name's own limit is spent: a browser never logged in as tom is refused...
            var stranger = Browser(port: web.port, address: "127.0.4.1")
            answers.append(stranger.login("tom", Self.password)?.status ?? 0)
            // ...but tom's is not, each time after another round of the attack.
            for _ in 0..<4 {
                hammer()
                tom.cookies["lineup_session"] = nil
                answers.append(tom.login("tom", Self.password)?.status ?? 0)
            }
            print(
                #"page-under-attack: {"attack":"wrong passwords for tom from 11 browsers","attempts":\#(attackers),"tom_device_cookie":\#(device != nil),"answers":\#(answers)}"#
            )
            return answers
        }
        guard let answers = outcome else { return }
        #expect(answers.first == 200)
        #expect(answers.dropFirst().first == 429, "a browser new to tom was not limited: \(answers)")
        #expect(answers.dropFirst(2).allSatisfy { $0 == 200 }, "tom's own browser was kept out: \(answers)")
    }
}

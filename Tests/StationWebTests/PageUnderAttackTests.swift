import Foundation
import Glibc
import Synchronization
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

    func report(_ attack: String, _ times: PageTimes, before: PageTimes, _ extra: String) {
        print(
            #"page-under-attack: {"attack":"\#(attack)","page":\#(PageTimes.figures(times.page)),"click":\#(PageTimes.figures(times.click)),"before_the_attack":{"page":\#(PageTimes.figures(before.page)),"click":\#(PageTimes.figures(before.click))},\#(extra)}"#
        )
    }

    /// The same measurement just before the attack, at the same machine load, to read the
    /// attack's figures against.
    static func beforeTheAttack(_ trainer: Browser, rounds: Int = rounds) -> PageTimes {
        PageTimes.measure(trainer, rounds: rounds, seconds: seconds, pause: 0.05)
    }

    /// The flood's measurement: 100 page loads and Clicks (about 10 s), so that its p99 is not
    /// merely the slowest of 20 on a machine shared with builds.
    static let floodRounds = 100

    /// The measurement: at least 20 page loads and Clicks over at least 3 s, so the slowest of
    /// them is taken beside the attack in its full force (a refused login is answered only after
    /// a second: a 0.5 s measurement once saw one answer of the flood's).
    static let rounds = 20
    static let seconds = 3.0

    /// The machine's load average (1, 5, 15 min), printed with every figure.
    static var loadAverage: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return "[" + text.split(separator: " ").prefix(3).joined(separator: ",") + "]"
    }

    @Test func fifteenHundredSilentConnectionsLeaveThePageAndClickAnswering() async throws {
        let outcome = try await withPage { web, trainer -> (PageTimes, Int, Int, Int) in
            // The trainer's live page, open before the attack: its stream must keep coming.
            let live = try RawStream(
                port: web.port, path: "/api/events", cookie: trainer.cookieHeader[0].dropFirst(8).description)
            defer { live.close() }
            let quiet = Self.beforeTheAttack(trainer)
            let before = web.openFiles
            let cpuBefore = web.cpuSeconds
            let start = Date()
            let attack = SilentConnections(port: web.port, connections: 1500, addresses: 150, net: 2)
            // Each is closed at its header deadline (10 s) and reopened at once by the attacker,
            // all together, as they were opened together. A round is measured only with all
            // 1,500 held by lineup-web (waited for, bounded), and kept only if none was closed
            // while it ran; a round that crossed a deadline is kept apart and printed apart.
            let framesBefore = live.frames("status").count
            var times = PageTimes()
            var crossed = PageTimes()
            var held = Int.max
            let measuring = Date()
            while (times.page.count < Self.rounds || Date().timeIntervalSince(measuring) < Self.seconds)
                && Date().timeIntervalSince(measuring) < 120
            {
                let whole = Date().addingTimeInterval(15)
                while web.openFiles < before + 1495 && Date() < whole { Thread.sleep(forTimeInterval: 0.05) }
                let reopened = attack.reopened
                let holding = web.openFiles - before
                let round = PageTimes.measure(trainer, rounds: 1)
                if attack.reopened != reopened {
                    crossed.append(round)
                    continue
                }
                held = min(held, holding, web.openFiles - before)
                times.append(round)
                Thread.sleep(forTimeInterval: 0.05)
            }
            // The live page still gets the station's status (every 0.5 s), waited for a bounded time.
            let framed = Date().addingTimeInterval(5)
            while live.frames("status").count == framesBefore && Date() < framed {
                Thread.sleep(forTimeInterval: 0.05)
            }
            let framesDuring = live.frames("status").count - framesBefore
            let seconds = Date().timeIntervalSince(start)
            let cpu = (web.cpuSeconds - cpuBefore) / seconds
            let bench = benchClickBesideAttack()
            let sockets = attack.open
            attack.stop()
            report(
                "1500 silent connections from 150 addresses", times, before: quiet,
                #""load_average":\#(Self.loadAverage),"seconds":\#(String(format: "%.1f", seconds)),"lineup_web_cpu":\#(String(format: "%.2f", cpu)),"held_by_lineup_web_at_least":\#(held),"rounds_kept_apart_for_crossing_a_deadline":{"page":\#(PageTimes.figures(crossed.page)),"click":\#(PageTimes.figures(crossed.click))},"attacker_sockets":\#(sockets),"live_status_frames":\#(framesDuring)\#(bench.map { #","bench_click":"# + $0 } ?? "")"#
            )
            return (times, framesDuring, held, sockets)
        }
        guard let (times, frames, held, sockets) = outcome else { return }
        // The attack in full force for every round kept: the attacker's 1,500 sockets open,
        // none closed by lineup-web while the round ran, and lineup-web holding them before and
        // after it (its descriptors over those it had before; its own vary by a few: a request
        // of the trainer's being closed, its link to lineupd).
        #expect(sockets == 1500, "the attacker held \(sockets) of its 1,500 connections")
        #expect(held >= 1495, "lineup-web held only \(held) of the 1,500 silent connections during the measurement")
        #expect(times.page.count >= Self.rounds)
        #expect(times.page.allSatisfy { $0 != nil }, "the trainer's page went unanswered: \(times.page)")
        #expect(times.click.allSatisfy { $0 != nil }, "the trainer's Click went unanswered: \(times.click)")
        #expect(frames > 0, "the trainer's live page got no status during the attack")
    }

    @Test func aLoginFloodFrom250AddressesLeavesThePageAndClickAnswering() async throws {
        let addresses = 250
        let outcome = try await withPage { web, trainer -> (PageTimes, Int, Int, Int) in
            let quiet = Self.beforeTheAttack(trainer, rounds: Self.floodRounds)
            let before = web.openFiles
            let flood = LoginFlood(port: web.port, addresses: addresses, net: 3)
            // Full force before the first sample: a login in flight from every address, and
            // the flood answered once for each address (past its first logins, which are
            // checked, into the refusals it gets from then on).
            let ready = Date().addingTimeInterval(20)
            while (flood.inFlight < addresses - 25 || flood.answered < addresses) && Date() < ready {
                Thread.sleep(forTimeInterval: 0.05)
            }
            let cpuBefore = web.cpuSeconds
            let floodCPUBefore = flood.cpuSeconds
            let start = Date()
            let answeredBefore = flood.answered
            let statusesBefore = flood.statuses
            var inFlight = Int.max
            var open = Int.max
            let times = PageTimes.measure(trainer, rounds: Self.floodRounds, seconds: Self.seconds, pause: 0.05) {
                inFlight = min(inFlight, flood.inFlight)
                open = min(open, web.openFiles - before)
            }
            inFlight = min(inFlight, flood.inFlight)
            let seconds = Date().timeIntervalSince(start)
            let answeredDuring = flood.answered - answeredBefore
            let cpu = (web.cpuSeconds - cpuBefore) / seconds
            let floodCPU = (flood.cpuSeconds - floodCPUBefore) / seconds
            let during = flood.statuses.map { ($0.key, $0.value - (statusesBefore[$0.key] ?? 0)) }.sorted {
                $0.0 < $1.0
            }
            .map { #""\#($0.0)":\#($0.1)"# }.joined(separator: ",")
            let bench = benchClickBesideAttack()
            flood.stop()
            report(
                "random-name logins from 250 addresses", times, before: quiet,
                #""load_average":\#(Self.loadAverage),"seconds":\#(String(format: "%.1f", seconds)),"lineup_web_cpu":\#(String(format: "%.2f", cpu)),"flood_client_cpu":\#(String(format: "%.2f", floodCPU)),"flood_in_flight_at_least":\#(inFlight),"lineup_web_connections_at_least":\#(open),"flood_answers_during_measurement":{\#(during)}\#(bench.map { #","bench_click":"# + $0 } ?? "")"#
            )
            return (times, inFlight, open, answeredDuring)
        }
        guard let (times, inFlight, _, answeredDuring) = outcome else { return }
        // The flood in full force for the whole measurement: nearly every address with a
        // connection at the page at each sample (its login sent and not yet answered, or
        // waiting to be accepted; one just answered is sent again at the flood's next turn),
        // and on average each address answered at least once every two
        // measured seconds (a refusal waits 1 s). What lineup-web holds is a figure only: a
        // connection just made waits in the kernel's queue until lineup-web accepts it.
        #expect(inFlight >= addresses - 25, "only \(inFlight) of the flood's \(addresses) logins were in flight")
        #expect(
            Double(answeredDuring) >= Double(addresses) * Self.seconds * 0.5,
            "the flood was answered only \(answeredDuring) times during the measurement")
        #expect(times.page.count >= Self.floodRounds)
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
            // Whether one of the round's guesses was checked (401): it took the name's token.
            @discardableResult func hammer() -> Bool {
                let sources = (2...11).map { "127.0.4.\($0)" } + ["127.0.4.1"]  // and tom's own address
                let checked = Atomic<Int>(0)
                let threads = sources.map { source in
                    Thread {
                        var attacker = Browser(port: web.port, address: source)
                        if attacker.login("tom", "not-tom's-password")?.status == 401 {
                            checked.add(1, ordering: .relaxed)
                        }
                    }
                }
                threads.forEach { $0.start() }
                while threads.contains(where: { !$0.isFinished }) { Thread.sleep(forTimeInterval: 0.01) }
                attackers += 10
                return checked.load(ordering: .relaxed) > 0
            }
            for _ in 0..<6 { hammer() }
            // The name's bucket refills one token in 12 s and a round's guesses all come at its
            // start: the stranger comes right after a round in which a guess took the token, not
            // in a gap where one refilled (CI at 5c16c6b: six rounds stretched past 12 s by
            // the checks' rest on a loaded machine, and the stranger got in).
            var rounds = 0
            while rounds < 30, !hammer() { rounds += 1 }
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

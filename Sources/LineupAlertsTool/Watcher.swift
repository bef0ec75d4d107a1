import Alerts
import Dispatch
import Foundation
import LabStore
import PostgresNIO
import StationControl

/// The loop: every `check_every` (and at once when lineupd's watch stream reports a sensor
/// fault) ask lineupd and the store, let the rules and the book decide, send what they say, and
/// ping the dead-man URL on its own schedule. A notice a channel could not take is tried again
/// on that channel at each check for a day, so one outage of the mail server loses nothing and
/// nothing is sent twice where it arrived.
final class Watcher: @unchecked Sendable {
    let settings: AlertsConfig
    let station: String
    let channels: Channels
    var book: AlertBook
    var watch: StationWatch?
    /// What the lab rule saw last: kept while the store does not answer (unknown is not resolved).
    var labConditions: [AlertCondition] = []
    var storeProblem: String?
    var outbox: [(notice: AlertNotice, channel: Channels.Channel, since: Date)] = []
    var nextPing: Date?
    /// Our clock: the wall time at start plus the monotonic time since, so a clock step (NTP on a
    /// board without a battery) never looks like a restart or an hour of silence.
    let startWall = Date()
    let startMono = DispatchTime.now().uptimeNanoseconds

    init(settings: AlertsConfig, station: String, channels: Channels) {
        self.settings = settings
        self.station = station
        self.channels = channels
        book = AlertBook(repeatEvery: settings.repeatEvery)
        watch = settings.station.map { StationWatch(station: station, socket: $0.socket, times: $0.times) }
    }

    func now() -> Date {
        startWall.addingTimeInterval(Double(DispatchTime.now().uptimeNanoseconds - startMono) / 1e9)
    }

    func run() async {
        let (wakes, waker) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        if let socket = settings.station?.socket { followWatchStream(socket: socket, waker: waker) }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(settings.checkEvery))
                waker.yield()
            }
        }
        defer { ticker.cancel() }
        await check()
        for await _ in wakes { await check() }
    }

    func check() async {
        let now = now()
        var conditions: [AlertCondition] = []
        var answers = true
        if let socket = settings.station?.socket, watch != nil {
            let status = await StationHeartbeat.askStatus(socket: socket, timeout: min(5, settings.checkEvery))
            if case .failure = status { answers = false }
            conditions += watch!.observe(status, at: now)
        }
        if let lab = settings.lab {
            do {
                let (stations, storeNow) = try await Self.heartbeats(connection: lab.connection)
                labConditions = LabWatch.observe(stations, notSeenAfter: lab.notSeenAfter, at: storeNow)
                if storeProblem != nil { say("the lab store answers again") }
                storeProblem = nil
            } catch {
                let problem = "\(error)"
                if problem != storeProblem { say("the lab store: \(problem)") }
                storeProblem = problem
                answers = false
            }
            conditions += labConditions
        }
        for notice in book.update(conditions, at: now) {
            say("\(notice.kind.rawValue): \(notice.station): \(notice.title)")
            for channel in channels.all { await deliver(notice, on: channel, since: now) }
        }
        let waiting = outbox
        outbox = []
        for entry in waiting where now.timeIntervalSince(entry.since) < 86400 {
            await deliver(entry.notice, on: entry.channel, since: entry.since)
        }
        if let dead = settings.deadMan, now >= (nextPing ?? now) {
            nextPing = now.addingTimeInterval(dead.every)
            if let ping = DeadManPing.decide(
                watchedAnswers: answers, firing: book.firing, failOnAlerts: dead.failOnAlerts)
            {
                do {
                    try await HTTPSender.ping(ping, url: dead.url, station: station)
                } catch {
                    say("dead-man ping: \(error)")
                }
            }
        }
    }

    func deliver(_ notice: AlertNotice, on channel: Channels.Channel, since: Date) async {
        do {
            try await channels.send(notice, on: channel)
        } catch {
            say("\(channel.name): \(error) (tried again at the next check)")
            outbox.append((notice, channel, since))
        }
    }

    /// lineupd's watch stream, on a thread of its own (the client blocks): a sensor fault wakes
    /// the loop at once instead of at the next check. Reconnects after lineupd comes back.
    func followWatchStream(socket: String, waker: AsyncStream<Void>.Continuation) {
        let pause = settings.checkEvery
        Thread.detachNewThread {
            while true {
                let client = ControlClient(path: socket, timeout: 5)
                try? client.watchEvents { event in
                    if event.kind == .fault { waker.yield() }
                    return true
                }
                waker.yield()
                Thread.sleep(forTimeInterval: pause)
            }
        }
    }

    /// Each station's newest heartbeat, and the store's clock that stamped them.
    static func heartbeats(connection: String) async throws -> ([SeenStation], Date) {
        let settings = try LabConnection.read(path: connection)
        let store = try await LabStore.connect(settings)
        do {
            var stations: [SeenStation] = []
            var now = Date().timeIntervalSince1970
            for row in try await store.rows(
                """
                SELECT station_id, station_name, extract(epoch FROM received_at)::float8 AS seen,
                    extract(epoch FROM now())::float8 AS now
                FROM public.station_latest ORDER BY station_name, station_id
                """)
            {
                let (id, name, seen, storeNow) = try row.decode((String, String, Double, Double).self)
                stations.append(SeenStation(id: id, name: name, lastSeen: Date(timeIntervalSince1970: seen)))
                now = storeNow
            }
            await store.close()
            return (stations, Date(timeIntervalSince1970: now))
        } catch {
            await store.close()
            throw error
        }
    }
}

extension Channels {
    enum Channel: Sendable {
        case email
        case webhook(Int)
    }

    var all: [Channel] {
        (settings.email == nil ? [] : [.email]) + settings.webhooks.indices.map { .webhook($0) }
    }

    func send(_ notice: AlertNotice, on channel: Channel) async throws {
        switch channel {
        case .email:
            let email = settings.email!
            let message = MailMessage(
                notice: notice, from: email.from, to: email.to, messageID: "\(UUID().uuidString)@\(hostName)")
            try await SMTPClient(settings: email, hostName: hostName).send(message)
        case .webhook(let index):
            try await HTTPSender.send(notice, to: settings.webhooks[index])
        }
    }
}

extension Channels.Channel {
    var name: String {
        switch self {
        case .email: "e-mail"
        case .webhook(let index): "webhook \(index + 1)"
        }
    }
}

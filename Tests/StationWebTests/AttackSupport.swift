import Foundation
import Glibc
import Synchronization
import Testing

// The attacks of issue 33 on a real lineup-web process, from many client addresses: on Linux
// every address of 127.0.0.0/8 is loopback, so a client socket bound to 127.0.x.y before it
// connects is another client address as lineup-web sees it.

/// A real `lineup-web`, started as the unit starts it (the same flags) with the open-file
/// limit systemd gives a unit that sets none: 1,024 (soft).
final class WebProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    var pid: Int32 { process.processIdentifier }

    convenience init?(station: SimulatedStation, users: String) throws {
        try self.init(socket: station.socket, db: station.db, users: users)
    }

    /// lineup-web alone, on lineupd's `socket` and `db` whether or not a lineupd serves them
    /// (the login and its limits need no lineupd).
    init?(socket: String, db: String, users: String) throws {
        let binary = builtProgram("lineup-web")
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            Issue.record("lineup-web is not built: run `swift build` before `swift test`")
            return nil
        }
        port = freePort()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", #"ulimit -S -n 1024 && exec "$0" "$@""#, binary, "--socket", socket, "--users", users, "--db", db,
            "--host", "127.0.0.1", "--port", String(port),
        ]
        var environment = ProcessInfo.processInfo.environment
        for key in ["LINEUP_WEB_USERS", "LINEUP_SOCKET", "LINEUP_DB"] { environment[key] = nil }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func waitReady() -> Bool {
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if let reply = httpRequest(port: port, "GET", "/login", timeout: 1), reply.status == 200 { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    /// Seconds of CPU lineup-web has used so far (user and system), from /proc.
    var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Fields 14 and 15 of stat(5): the 12th and 13th after the name.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Descriptors lineup-web has open now.
    var openFiles: Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1 }

    func terminate() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    /// Ends lineup-web at once (SIGKILL): a graceful stop waits for every login in the
    /// password checks' line, minutes when a test filled it with slow checks.
    func killNow() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// A port no one listens on now (the kernel's choice for a socket bound to port 0).
func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = socketAddress("127.0.0.1", port: 0)
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

func socketAddress(_ host: String, port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr(host)
    return address
}

/// A TCP socket from `source` (an address of 127.0.0.0/8) to 127.0.0.1:`port`; non-blocking
/// ones return while the connection is still being made.
func connectFrom(_ source: String, port: Int, nonBlocking: Bool, timeout: Double = 5) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var local = socketAddress(source, port: 0)
    let bound = withUnsafePointer(to: &local) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else {
        close(fd)
        return nil
    }
    if nonBlocking {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    } else {
        // On Linux the send timeout bounds connect() too.
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }
    var remote = socketAddress("127.0.0.1", port: port)
    let connected = withUnsafePointer(to: &remote) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    if connected != 0 && !(nonBlocking && errno == EINPROGRESS) {
        close(fd)
        return nil
    }
    return fd
}

struct HTTPReply {
    var status: Int
    var headers: [(String, String)]
    var body: String
    var seconds: Double

    func header(_ name: String) -> [String] { headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1) }
}

/// One request on a connection of its own (`Connection: close`), as a browser whose kept-alive
/// connection was closed makes it: nil when no whole answer came within `timeout` seconds.
func httpRequest(
    port: Int, _ method: String, _ path: String, from source: String = "127.0.0.1", headers: [String] = [],
    body: String? = nil, timeout: Double = 5
) -> HTTPReply? {
    let start = DispatchTime.now().uptimeNanoseconds
    guard let fd = connectFrom(source, port: port, nonBlocking: false, timeout: timeout) else { return nil }
    defer { close(fd) }
    var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
    for header in headers { request += header + "\r\n" }
    if let body { request += "Content-Length: \(body.utf8.count)\r\n" }
    request += "\r\n" + (body ?? "")
    let bytes = Array(request.utf8)
    var sent = 0
    while sent < bytes.count {
        let n = bytes[sent...].withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n <= 0 { return nil }
        sent += n
    }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16384)
    let deadline = Double(start) / 1e9 + timeout
    while Double(DispatchTime.now().uptimeNanoseconds) / 1e9 < deadline {
        let n = recv(fd, &buffer, buffer.count, 0)
        if n < 0 { return nil }
        if n == 0 { break }
        received += buffer[0..<n]
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let text = String(decoding: received, as: UTF8.self)
    guard let split = text.range(of: "\r\n\r\n") else { return nil }
    let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
    guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1.1 "),
        let status = Int(statusLine.dropFirst(9).prefix(3))
    else { return nil }
    let fields = lines.dropFirst().compactMap { line -> (String, String)? in
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
    var body = String(text[split.upperBound...])
    if fields.contains(where: { $0.0.lowercased() == "transfer-encoding" && $0.1.contains("chunked") }) {
        body = dechunk(body)
    }
    return HTTPReply(status: status, headers: fields, body: body, seconds: seconds)
}

func dechunk(_ text: String) -> String {
    var rest = Substring(text)
    var out = ""
    while let lineEnd = rest.range(of: "\r\n"), let size = Int(rest[..<lineEnd.lowerBound], radix: 16), size > 0 {
        let start = lineEnd.upperBound
        guard let end = rest.index(start, offsetBy: size, limitedBy: rest.endIndex) else { break }
        out += rest[start..<end]
        rest = rest[end...].dropFirst(2)
    }
    return out
}

/// A browser on the page: its address, its cookies and the page's CSRF token.
struct Browser {
    var port: Int
    var address = "127.0.0.1"
    var cookies: [String: String] = [:]
    var csrf = ""

    var cookieHeader: [String] {
        cookies.isEmpty
            ? []
            : ["Cookie: " + cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")]
    }

    mutating func login(_ name: String, _ password: String, timeout: Double = 10) -> HTTPReply? {
        let reply = httpRequest(
            port: port, "POST", "/api/login", from: address,
            headers: ["Origin: http://127.0.0.1:\(port)", "Content-Type: application/json"] + cookieHeader,
            body: #"{"name":"\#(name)","password":"\#(password)"}"#, timeout: timeout)
        guard let reply, reply.status == 200 else { return reply }
        for cookie in reply.header("Set-Cookie") {
            let pair = cookie.split(separator: ";")[0].split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { cookies[pair[0]] = pair[1] }
        }
        if let object = try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any],
            let csrf = object["csrf"] as? String
        {
            self.csrf = csrf
        }
        return reply
    }

    func get(_ path: String, timeout: Double = 5) -> HTTPReply? {
        httpRequest(port: port, "GET", path, from: address, headers: cookieHeader, timeout: timeout)
    }

    func post(_ path: String, _ body: String, timeout: Double = 5) -> HTTPReply? {
        httpRequest(
            port: port, "POST", path, from: address,
            headers: [
                "Origin: http://127.0.0.1:\(port)", "Content-Type: application/json", "X-CSRF-Token: \(csrf)",
            ] + cookieHeader, body: body, timeout: timeout)
    }
}

/// The page's figures under an attack: each request's time, or nil when it got no answer.
struct PageTimes {
    var page: [Double?] = []
    var click: [Double?] = []

    mutating func append(_ other: PageTimes) {
        page += other.page
        click += other.click
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)]
    }

    static func figures(_ times: [Double?]) -> String {
        let answered = times.compactMap { $0 }.map { $0 * 1000 }
        let p50 = percentile(answered, 0.5)
        let p99 = percentile(answered, 0.99)
        // JSON has no NaN: a figure of no samples is null.
        func number(_ value: Double) -> String { value.isNaN ? "null" : String(format: "%.1f", value) }
        return
            #"{"asked":\#(times.count),"answered":\#(answered.count),"p50_ms":\#(number(p50)),"p99_ms":\#(number(p99)),"max_ms":\#(number(answered.max() ?? .nan))}"#
    }

    /// The trainer's page (`GET /` and `/api/status`, as a reload asks them) and the Click
    /// (`POST /api/press`), each on a new connection, at least `rounds` times and for at least
    /// `seconds`, resting `pause` s between rounds; `beforeEach` runs before each round (outside
    /// the times), for the test to check that its attack is still in full force. After `giveUp`
    /// requests without an answer it stops (each waits `timeout` s).
    static func measure(
        _ trainer: Browser, rounds: Int, seconds: Double = 0, pause: Double = 0, timeout: Double = 5,
        giveUp: Int = 3, beforeEach: () -> Void = {}
    ) -> PageTimes {
        var times = PageTimes()
        var failures = 0
        let start = Date()
        var round = 0
        while failures < giveUp && (round < rounds || Date().timeIntervalSince(start) < seconds) {
            if round > 0 && pause > 0 { Thread.sleep(forTimeInterval: pause) }
            round += 1
            beforeEach()
            let page = trainer.get("/", timeout: timeout)
            let status = page == nil ? nil : trainer.get("/api/status", timeout: timeout)
            if let page, let status, page.status == 200, status.status == 200 {
                times.page.append(page.seconds + status.seconds)
            } else {
                times.page.append(nil)
                failures += 1
            }
            let click = trainer.post("/api/press", #"{"button":"clicker"}"#, timeout: timeout)
            if let click, click.status == 200 {
                times.click.append(click.seconds)
            } else {
                times.click.append(nil)
                failures += 1
            }
        }
        return times
    }
}

/// Raises this process's own open-file limit (the attacks hold thousands of sockets).
func raiseOpenFiles(to wanted: Int) {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    if limit.rlim_cur < rlim_t(wanted) {
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// `connections` sockets to the page from `addresses` client addresses (127.0.`net`.1, ...),
/// none ever sending a byte; each one lineup-web closes is opened again at once, until `stop`.
final class SilentConnections: @unchecked Sendable {
    private let stopped = Atomic<Bool>(false)
    private let reopenedCount = Atomic<Int>(0)
    private let openCount = Atomic<Int>(0)
    private var thread: Thread?
    var reopened: Int { reopenedCount.load(ordering: .relaxed) }
    var open: Int { openCount.load(ordering: .relaxed) }

    init(port: Int, connections: Int, addresses: Int, net: Int) {
        let sources = (0..<connections).map { "127.0.\(net).\($0 % addresses + 1)" }
        // Opened before this returns, so the attack is in place when the measuring starts.
        let opened = sources.map { connectFrom($0, port: port, nonBlocking: true) ?? -1 }
        openCount.store(opened.filter { $0 >= 0 }.count, ordering: .relaxed)
        thread = Thread { [self] in
            var fds = opened
            var buffer = [UInt8](repeating: 0, count: 512)
            while !stopped.load(ordering: .relaxed) {
                var polls = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                _ = poll(&polls, nfds_t(polls.count), 100)
                for (i, entry) in polls.enumerated() {
                    if fds[i] < 0 {
                        fds[i] = connectFrom(sources[i], port: port, nonBlocking: true) ?? -1
                        continue
                    }
                    guard entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 else { continue }
                    // Readable: lineup-web closed it (it is never sent anything to answer).
                    if recv(entry.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 { continue }
                    close(entry.fd)
                    fds[i] = connectFrom(sources[i], port: port, nonBlocking: true) ?? -1
                    reopenedCount.add(1, ordering: .relaxed)
                }
                openCount.store(fds.filter { $0 >= 0 }.count, ordering: .relaxed)
            }
            for fd in fds where fd >= 0 { close(fd) }
        }
        thread?.start()
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        while thread?.isFinished == false { Thread.sleep(forTimeInterval: 0.01) }
        openCount.store(0, ordering: .relaxed)
    }
}

/// Logins with random names from `addresses` client addresses (127.0.`net`.1, ...), each
/// address keeping one login in flight at all times (a new one as soon as the last is
/// answered), until `stop`. Counts the answers by status.
///
/// It runs on a thread of its own, never on Swift's pool nor lineup-web's threads, and measures
/// the processor time it takes (`cpuSeconds`, printed with the figures as `flood_client_cpu`):
/// 0.03 cores under the 250-address flood, against lineup-web's 0.4 to 0.6, so it does not
/// starve the server it attacks. It keeps the page's own priority: at nice 19 it fell out of
/// full force on this shared machine (157 of 250 logins in flight, load 38).
final class LoginFlood: @unchecked Sendable {
    private let stopped = Atomic<Bool>(false)
    private let cpuNanoseconds = Atomic<Int>(0)
    /// Processor time the flood's thread has used so far, in seconds.
    var cpuSeconds: Double { Double(cpuNanoseconds.load(ordering: .relaxed)) / 1e9 }
    private let answers = Mutex<[Int: Int]>([:])
    private let answeredCount = Atomic<Int>(0)
    private let inFlightCount = Atomic<Int>(0)
    private var thread: Thread?
    /// Answers so far, by status.
    var statuses: [Int: Int] { answers.withLock { $0 } }
    /// Logins answered so far.
    var answered: Int { answeredCount.load(ordering: .relaxed) }
    /// Addresses with a connection at the page (its login sent whole and not yet read answered,
    /// or waiting to be accepted) when the flood's last poll returned (at most `addresses`).
    var inFlight: Int { inFlightCount.load(ordering: .relaxed) }

    init(port: Int, addresses: Int, net: Int) {
        thread = Thread { [self] in
            struct Slot {
                var fd: Int32 = -1
                var sent = false
                var received: [UInt8] = []
            }
            let sources = (1...addresses).map { "127.0.\(net).\($0)" }
            var slots = [Slot](repeating: Slot(), count: addresses)
            var buffer = [UInt8](repeating: 0, count: 4096)
            var counter = 0
            while !stopped.load(ordering: .relaxed) {
                for i in slots.indices where slots[i].fd < 0 {
                    slots[i] = Slot(fd: connectFrom(sources[i], port: port, nonBlocking: true) ?? -1)
                }
                var polls = slots.map {
                    pollfd(fd: $0.fd, events: Int16($0.sent ? POLLIN : POLLOUT), revents: 0)
                }
                _ = poll(&polls, nfds_t(polls.count), 100)
                // Counted as the poll returns, before this turn's answers are read, and with the
                // connections not yet writable (waiting in lineup-web's accept queue, the flood's
                // pressure too): counting only logins sent whole after the answers were read, a
                // burst of refusals read in one turn and connections queued behind a slow accept
                // read as a weaker flood (197, then 224 of 250 in a full test run) although every
                // address kept a connection at the page; the answers' rate is checked apart.
                inFlightCount.store(slots.filter { $0.fd >= 0 }.count, ordering: .relaxed)
                for (i, entry) in polls.enumerated() where entry.fd >= 0 && entry.revents != 0 {
                    if !slots[i].sent {
                        counter += 1
                        let body = #"{"name":"nobody-\#(counter)","password":"guess-\#(counter)-password"}"#
                        let request =
                            "POST /api/login HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
                            + "Origin: http://127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
                            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
                        let n = request.withCString { send(entry.fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                        if n <= 0 {
                            close(entry.fd)
                            slots[i] = Slot()
                        } else {
                            slots[i].sent = true
                        }
                        continue
                    }
                    let n = recv(entry.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                    if n > 0 {
                        slots[i].received += buffer[0..<n]
                        continue
                    }
                    let head = String(decoding: slots[i].received.prefix(12), as: UTF8.self)
                    let status = Int(head.dropFirst(9).prefix(3)) ?? 0
                    answers.withLock { $0[status, default: 0] += 1 }
                    answeredCount.add(1, ordering: .relaxed)
                    close(entry.fd)
                    slots[i] = Slot()
                }
                var time = timespec()
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
                cpuNanoseconds.store(time.tv_sec * 1_000_000_000 + time.tv_nsec, ordering: .relaxed)
            }
            for slot in slots where slot.fd >= 0 { close(slot.fd) }
        }
        thread?.start()
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        while thread?.isFinished == false { Thread.sleep(forTimeInterval: 0.01) }
        inFlightCount.store(0, ordering: .relaxed)
    }
}

/// `work` on a thread of its own, awaited: the attacks and the page's requests block, and the
/// test runner has one thread per core for every test at once.
func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// `lineup-bench click --clicks N` run beside an attack when `LINEUP_ATTACK_BENCH_CLICKS` is N
/// (issue 33: the click path's figures with the page under each attack): its JSON object, or
/// nil when not asked. The hot thread is realtime when this process may make it so (as
/// lineupd.service runs it); the JSON's `realtime` says whether it was.
func benchClickBesideAttack() -> String? {
    guard let text = ProcessInfo.processInfo.environment["LINEUP_ATTACK_BENCH_CLICKS"], let clicks = Int(text),
        clicks > 0
    else { return nil }
    let binary = builtProgram("lineup-bench")
    guard FileManager.default.isExecutableFile(atPath: binary) else { return #"{"error":"lineup-bench is not built"}"# }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["click", "--clicks", String(clicks), "--device", "null"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return #"{"error":"lineup-bench did not start"}"# }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    // One line, as the test's figures are printed.
    let json = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).joined(separator: " ")
        .trimmingCharacters(in: .whitespaces)
    guard process.terminationStatus == 0, json.hasPrefix("{") else {
        return #"{"error":"lineup-bench click exited \#(process.terminationStatus)"}"#
    }
    return json
}

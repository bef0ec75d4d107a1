import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StationControl
import StationWeb
import Synchronization
import WebAccounts

/// A stand-in for lineupd that answers nothing and counts what reached it: the security tests
/// check that a refused request never gets this far.
final class CountingLink: StationLink {
    private let calls = Mutex<[String]>([])
    var received: [String] { calls.withLock { $0 } }

    func send<C: ControlCall>(_ call: C) async throws(ControlClientError) -> C.Reply {
        calls.withLock { $0.append(C.name) }
        throw .notRunning(path: "/nowhere")
    }

    func watchBlocking(_ onEvent: (WatchEvent) -> Bool) throws(ControlClientError) {
        throw .notRunning(path: "/nowhere")
    }
}

/// A virtual clock for the login limit.
final class VirtualClock: Sendable {
    private let seconds = Mutex<Double>(1000)
    var now: Double { seconds.withLock { $0 } }
    func advance(_ by: Double) { seconds.withLock { $0 += by } }
}

/// An accounts file in a fresh directory with one user of each role, password `"\(name)-password"`.
/// bcrypt at its lowest cost (4) so the tests spend their time on what they check.
func makeUsers() throws -> UserStore {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("web-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let store = try UserStore(path: directory + "/users.db", create: true, cost: 4)
    for role in WebRole.allCases {
        try store.add(name: role.rawValue + "1", role: role, password: role.rawValue + "1-password")
    }
    return store
}

/// The test clients send `Host: localhost`: the page's own origin is then this.
let origin = "http://localhost"

/// A logged-in page: its cookie and CSRF token.
struct Page {
    var cookie: String
    var csrf: String

    var getHeaders: HTTPFields { [.cookie: cookie] }
    var postHeaders: HTTPFields {
        [
            .cookie: cookie, .origin: origin, .contentType: "application/json",
            HTTPField.Name("X-CSRF-Token")!: csrf,
        ]
    }
}

extension TestClientProtocol {
    func post(_ path: String, json: String, headers: HTTPFields) async throws -> TestResponse {
        try await execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: json))
    }

    func login(_ name: String, password: String? = nil) async throws -> (TestResponse, Page?) {
        let response = try await post(
            "/api/login", json: #"{"name":"\#(name)","password":"\#(password ?? name + "-password")"}"#,
            headers: [.origin: origin, .contentType: "application/json"])
        guard response.status == .ok, let setCookie = response.headers[.setCookie],
            let object = try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any],
            let csrf = object["csrf"] as? String
        else { return (response, nil) }
        return (response, Page(cookie: String(setCookie.split(separator: ";")[0]), csrf: csrf))
    }
}

extension Data {
    init(buffer: ByteBuffer?) {
        self = buffer.map { Data($0.readableBytesView) } ?? Data()
    }
}

func text(_ buffer: ByteBuffer?) -> String { buffer.map { String(buffer: $0) } ?? "" }

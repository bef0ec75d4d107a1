import Dispatch
import Foundation
import StationControl

/// What the page needs of lineupd: one request and its reply, and the watch stream. The real
/// one is the control socket (`SocketLink`); a test may hand in its own.
public protocol StationLink: Sendable {
    /// Sends one request of the control protocol's table and waits for its reply.
    func send<C: ControlCall>(_ call: C) async throws(ControlClientError) -> C.Reply
    /// Streams lineupd's watch events until `onEvent` returns false or the connection ends.
    /// Blocks its thread: the hub runs it on a thread of its own.
    func watchBlocking(_ onEvent: (WatchEvent) -> Bool) throws(ControlClientError)
}

/// lineupd over its control socket. `ControlClient` blocks (up to its time-out), so each
/// request runs on a thread of its own, never on Hummingbird's event loops or Swift's
/// cooperative threads. Not on a shared concurrent Dispatch queue either: on Linux such a queue
/// runs as many blocks at once as there are cores (two on the build machine), so two requests
/// waiting out a time-out held back every other one, the live page's status poll with them
/// (LivePageTests saw no status frame for 5 s while other pages' requests waited on a
/// restarting lineupd).
public struct SocketLink: StationLink {
    public let client: ControlClient

    public init(path: String, timeout: Double = 5) {
        client = ControlClient(path: path, timeout: timeout)
    }

    public func send<C: ControlCall>(_ call: C) async throws(ControlClientError) -> C.Reply {
        let client = self.client
        let result: Result<C.Reply, ControlClientError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                do throws(ControlClientError) {
                    continuation.resume(returning: .success(try client.send(call)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            thread.name = "lineup-web control"
            thread.start()
        }
        return try result.get()
    }

    public func watchBlocking(_ onEvent: (WatchEvent) -> Bool) throws(ControlClientError) {
        try client.watchEvents(onEvent)
    }
}

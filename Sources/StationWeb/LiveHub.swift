import Foundation
import StationControl
import WebAccounts

/// One server-sent event as it goes on the wire.
public struct LiveFrame: Sendable, Hashable {
    public var event: String
    public var data: String
    public var text: String { "event: \(event)\ndata: \(data)\n\n" }
}

/// The live feed of every open page, from one status poll and one watch connection to lineupd,
/// however many pages are open. Status and watch lines are what lineupd gives any watcher (in a
/// double-blind session, blinded by lineupd's own rule); the layout is fetched per view, only a
/// role that `seesLayout` is ever sent the assistant's, and the handler's role none at all.
public actor LiveHub {
    private let link: any StationLink
    private let pollSeconds: Double
    private var subscribers: [Int: (role: WebRole, continuation: AsyncStream<LiveFrame>.Continuation)] = [:]
    private var nextID = 0
    private var lastStatus: LiveFrame?
    private var lastLayout: [ClientView: LiveFrame] = [:]
    private var layoutKey: String?
    private var started = false
    private let encoder = JSONEncoder()

    public init(link: any StationLink, pollSeconds: Double = 0.5) {
        self.link = link
        self.pollSeconds = pollSeconds
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    /// A page's feed: the latest status and layout at once, then each change.
    public func subscribe(role: WebRole) -> AsyncStream<LiveFrame> {
        let id = nextID
        nextID += 1
        let (stream, continuation) = AsyncStream.makeStream(of: LiveFrame.self, bufferingPolicy: .bufferingNewest(256))
        if let lastStatus { continuation.yield(lastStatus) }
        if let view = Self.layoutView(role), let layout = lastLayout[view] { continuation.yield(layout) }
        subscribers[id] = (role, continuation)
        continuation.onTermination = { _ in Task { await self.drop(id) } }
        start()
        return stream
    }

    public var subscriberCount: Int { subscribers.count }

    /// The layout view a role's page is sent, if any: the page's one rule of who sees what of
    /// the layout (lineupd then blinds the handler's view in a double-blind session).
    public static func layoutView(_ role: WebRole) -> ClientView? {
        role.seesLayout ? .assistant : role.asksLayout ? .handler : nil
    }

    private func drop(_ id: Int) { subscribers[id] = nil }

    private func send(_ frame: LiveFrame, to roles: (WebRole) -> Bool) {
        for (_, subscriber) in subscribers where roles(subscriber.role) { subscriber.continuation.yield(frame) }
    }

    /// Starts the poll and the watch once, with the first page.
    private func start() {
        guard !started else { return }
        started = true
        let (lines, feed) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1024))
        let link = self.link
        // The watch blocks its thread; lines cross to the hub through one ordered stream.
        let thread = Thread {
            while true {
                do throws(ControlClientError) {
                    // Sent to the page as lineupd wrote it, by the one definition.
                    try link.watchBlocking { event in
                        feed.yield(event.line)
                        return true
                    }
                } catch {}
                Thread.sleep(forTimeInterval: 1)
            }
        }
        thread.name = "lineup-web watch"
        thread.start()
        Task { for await line in lines { self.send(LiveFrame(event: "watch", data: line), to: { _ in true }) } }
        Task {
            while true {
                await self.poll()
                try? await Task.sleep(for: .seconds(pollSeconds))
            }
        }
    }

    /// One status poll: sent to every page (the timer's seconds change each time); a changed
    /// session, state or trial fetches the layout again.
    func poll() async {
        do throws(ControlClientError) {
            let status = try await link.send(StatusRequest())
            let data = (try? encoder.encode(status)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            let frame = LiveFrame(event: "status", data: data)
            lastStatus = frame
            send(frame, to: { _ in true })
            // The trials done too: a round's end is seen by status before the log has it, and
            // lineupd's layout moves on to the next round only then.
            let key =
                "\(status.session ?? "-") \(status.state.rawValue) \(status.trial ?? 0) \(status.trialsDone ?? 0)"
            if key != layoutKey {
                layoutKey = key
                await refreshLayouts()
            }
        } catch {
            let why = #"{"live":false,"why":"# + jsonString(error.description) + "}"
            let frame = LiveFrame(event: "link", data: why)
            lastStatus = frame
            layoutKey = nil
            send(frame, to: { _ in true })
        }
    }

    private func refreshLayouts() async {
        for view in [ClientView.assistant, .handler] {
            let frame: LiveFrame
            do throws(ControlClientError) {
                let reply = try await link.send(LayoutRequest(view: view))
                let data = (try? encoder.encode(reply)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
                frame = LiveFrame(event: "layout", data: data)
            } catch {
                // The handler's view in a double-blind session is refused by lineupd itself; the
                // page shows the reason, never anything of the layout.
                frame = LiveFrame(event: "layout", data: #"{"hidden":"# + jsonString(error.description) + "}")
            }
            lastLayout[view] = frame
            send(frame, to: { Self.layoutView($0) == view })
        }
    }
}

/// A Swift string as a JSON string literal.
func jsonString(_ text: String) -> String {
    let data = (try? JSONEncoder().encode([text])) ?? Data("[\"\"]".utf8)
    return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
}

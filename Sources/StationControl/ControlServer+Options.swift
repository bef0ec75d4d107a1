import Foundation

extension ControlServer {
    public struct Options: Sendable {
        public var path: String
        /// The group given the socket, so its members may connect; nil leaves it as created.
        public var group: String?
        public var maxClients: Int
        /// Bytes queued for one client (unsent replies or events) before it is cut off.
        public var maxQueuedBytes: Int
        public var maxLineBytes: Int
        /// Seconds a connection may go without sending a complete request (since it connected,
        /// or since its last one) before it is closed; half a request does not count. Watchers
        /// are never idle. lineupctl sends its request as it connects and waits 5 s at most
        /// for the reply, so 10 s only ever closes a client that has stopped talking. 0 or
        /// less: no time-out.
        public var idleTimeout: Double
        /// Connections one user (the peer's uid, from SO_PEERCRED) may hold at once: a
        /// quarter of the default 32, so the slots one user's stuck scripts can take leave
        /// three quarters to everyone else, and a trainer still has room for a few watchers.
        public var maxClientsPerUser: Int

        public init(
            path: String = ControlProtocol.defaultSocketPath, group: String? = ControlProtocol.defaultGroup,
            maxClients: Int = 32, maxQueuedBytes: Int = 256 * 1024, maxLineBytes: Int = ControlProtocol.maxLineBytes,
            idleTimeout: Double = 10, maxClientsPerUser: Int = 8
        ) {
            self.path = path
            self.group = group
            self.maxClients = maxClients
            self.maxQueuedBytes = maxQueuedBytes
            self.maxLineBytes = maxLineBytes
            self.idleTimeout = idleTimeout
            self.maxClientsPerUser = maxClientsPerUser
        }
    }
}

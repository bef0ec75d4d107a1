// A feeder event's detail, beside the other kinds' in EventDetail.swift (a file of its own so
// parallel changes to that file merge cleanly).

/// A feeder pulse's: the kernel timestamp of the edge whose click it followed, and whether its
/// line could not be set (the dog was not fed by machine). The pulse's own times are the
/// event's columns: `kernel_ns` when the line went on, `duration_ns` how long it was on.
public struct FeederDetail: Sendable, Hashable, Codable {
    public var clickEdgeNs: Int64
    public var failed: Bool?

    public init(clickEdgeNs: Int64, failed: Bool? = nil) {
        self.clickEdgeNs = clickEdgeNs
        self.failed = failed
    }

    enum CodingKeys: String, CodingKey {
        case clickEdgeNs = "click_edge_ns"
        case failed
    }
}

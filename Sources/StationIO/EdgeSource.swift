/// Where edges come from: the real GPIO lines or the simulated lineup. The hot loop polls
/// `pollDescriptors` and, when one is readable, reads a batch from it.
public protocol EdgeSource: AnyObject {
    /// File descriptors that become readable when edges wait.
    var pollDescriptors: [Int32] { get }
    /// Reads up to `buffer.count` waiting edges from descriptor number `index`, oldest
    /// first. Returns how many; 0 when none waited. Never allocates.
    func readEdges(descriptor index: Int, into buffer: UnsafeMutableBufferPointer<SensorEdge>) -> Int
    /// Edges lost before they could be read (kernel buffer overflow), where that can be told.
    var droppedEdges: UInt64 { get }
    /// Whether `droppedEdges` can see drops at all (libgpiod v1 cannot).
    var countsDrops: Bool { get }
    /// A line's level now, for `selftest` and to seed the debouncer.
    func level(of line: UInt32) -> Bool?
}

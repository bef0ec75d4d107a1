import CStationShim
import Glibc
import StationConfig

/// The real lineup: the configuration's input lines requested through libgpiod (v1 or v2,
/// whichever the build found) with both-edge events and the kernel's monotonic timestamps.
public final class GPIOLineup: EdgeSource {
    private let handle: OpaquePointer
    private let batch: UnsafeMutableBufferPointer<lineup_edge>
    public let pollDescriptors: [Int32]
    public let inputCount: Int
    private let outputLines: [Int]  // shim line index of each requested output

    /// "1.6.3 (v1 API)" or "2.3 (v2 API)".
    public static var libraryVersion: String { String(cString: lineup_gpio_api()) }

    /// Requests `inputs` (edges) and `outputs` (levels you set) under the consumer name
    /// `consumer`, which `gpioinfo` shows beside each line.
    public init(inputs: [InputLine], outputs: [OutputLine] = [], consumer: String = "lineupd") throws(StationIOError) {
        var cStrings: [UnsafeMutablePointer<CChar>] = []
        defer { cStrings.forEach { free($0) } }
        func keep(_ s: String) -> UnsafePointer<CChar>? {
            guard let p = strdup(s) else { return nil }
            cStrings.append(p)
            return UnsafePointer(p)
        }
        func spec(_ locator: LineLocator, activeLow: Bool, bias: LineBias, output: Bool) -> lineup_line_spec {
            var s = lineup_line_spec()
            switch locator {
            case .name(let name): s.name = keep(name)
            case .chipLabel(let label, let offset):
                s.chip_label = keep(label)
                s.offset = UInt32(clamping: offset)
            }
            s.active_low = activeLow ? 1 : 0
            switch bias {
            case .asIs: s.bias = Int32(LINEUP_BIAS_AS_IS.rawValue)
            case .pullUp: s.bias = Int32(LINEUP_BIAS_PULL_UP.rawValue)
            case .pullDown: s.bias = Int32(LINEUP_BIAS_PULL_DOWN.rawValue)
            case .disabled: s.bias = Int32(LINEUP_BIAS_DISABLED.rawValue)
            }
            s.output = output ? 1 : 0
            return s
        }
        var specs = inputs.map { spec($0.locator, activeLow: $0.activeLow, bias: $0.bias, output: false) }
        specs += outputs.map { spec($0.locator, activeLow: $0.activeLow, bias: .asIs, output: true) }
        var err = [CChar](repeating: 0, count: 1024)
        guard let handle = lineup_gpio_open(specs, specs.count, consumer, &err, err.count) else {
            throw StationIOError(.gpio, String(cString: err))
        }
        self.handle = handle
        inputCount = inputs.count
        outputLines = outputs.indices.map { inputs.count + $0 }
        pollDescriptors = (0..<lineup_gpio_fd_count(handle)).map { lineup_gpio_fd(handle, $0) }
        batch = .allocate(capacity: 64)
    }

    deinit {
        lineup_gpio_close(handle)
        batch.deallocate()
    }

    public func readEdges(descriptor index: Int, into buffer: UnsafeMutableBufferPointer<SensorEdge>) -> EdgeRead {
        // The shim's descriptors are non-blocking: an empty one reads 0, not a wait.
        let n = lineup_gpio_read_edges(handle, index, batch.baseAddress, min(buffer.count, batch.count))
        guard n >= 0 else { return .failed(errno: -n) }
        for k in 0..<Int(n) {
            let e = batch[k]
            buffer[k] = SensorEdge(timestamp: e.timestamp_ns, line: e.line, isActive: e.active != 0)
        }
        return .edges(Int(n))
    }

    public func lines(ofDescriptor index: Int) -> [UInt32] {
        var lines = [UInt32](repeating: 0, count: 64)
        let n = lineup_gpio_fd_lines(handle, index, &lines, lines.count)
        return Array(lines.prefix(n))
    }

    public var droppedEdges: UInt64 { lineup_gpio_dropped(handle) }
    public var countsDrops: Bool { lineup_gpio_counts_drops() != 0 }

    public func level(of line: UInt32) -> Bool? {
        let v = lineup_gpio_get(handle, Int(line))
        return v < 0 ? nil : v == 1
    }

    /// Drives output number `index` (in the order given at init).
    @discardableResult
    public func setOutput(_ index: Int, active: Bool) -> Bool {
        guard index < outputLines.count else { return false }
        return lineup_gpio_set(handle, outputLines[index], active ? 1 : 0) == 0
    }

    /// Where each requested line was found, for `selftest` and the start-up log.
    public func describe(line: Int) -> String {
        var text = [CChar](repeating: 0, count: 256)
        lineup_gpio_describe(handle, line, &text, text.count)
        return String(cString: text)
    }
}

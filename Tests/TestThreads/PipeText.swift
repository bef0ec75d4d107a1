import Foundation
import Glibc
import Synchronization

/// What a child process writes to a pipe, read as it comes on a thread of its own (blocking
/// reads until end of file), for a test to look at while the child runs.
///
/// Why not `FileHandle.readabilityHandler`: a handler that clears itself at end of file tears
/// down its dispatch source while other threads launch processes, and on Linux that teardown
/// can crash the whole test process in libdispatch (`_dispatch_event_loop_drain` on the manager
/// thread; swift-corelibs-foundation PR #5507, from sourcekit-lsp #2717). CI's run died so
/// once, and a stress program beside concurrent launches reproduced it; plain reads on a
/// thread use no dispatch source.
public final class PipeText: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    private let ended = DispatchSemaphore(value: 0)
    private let atEnd = Atomic<Bool>(false)

    /// Starts reading `handle` (a pipe's reading end) at once. The thread holds the handle
    /// until end of file: the child and every copy of the writing end are gone.
    public init(_ handle: FileHandle) {
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    bytes.withLock { $0 += buffer[0..<count] }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break  // End of file, or an error: nothing more will come.
                }
            }
            atEnd.store(true, ordering: .releasing)
            ended.signal()
        }.start()
    }

    /// All read so far.
    public var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }

    /// Whether the pipe has reached end of file (all that will ever come is in `text`).
    public var isAtEnd: Bool { atEnd.load(ordering: .acquiring) }

    /// Waits up to `seconds` for end of file; whether it came.
    @discardableResult
    public func waitForEnd(seconds: Double) -> Bool {
        guard !isAtEnd else { return true }
        guard ended.wait(timeout: .now() + seconds) == .success else { return false }
        ended.signal()  // For another waiter.
        return true
    }
}

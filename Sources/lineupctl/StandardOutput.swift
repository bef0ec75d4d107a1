import Foundation
import SessionLog

#if canImport(Glibc)
    import Glibc
#endif

// Every byte lineupctl prints on standard output goes through `writeOut`: Foundation's
// `FileHandle.write` traps on any error (`try!`), and a reader that closes the pipe early
// (`lineupctl stats | head -1`) is no error. Where SIGPIPE is ignored (swift-nio ignores it
// for the whole process once the lab store is opened; a parent may have ignored it before
// starting lineupctl), the write fails with EPIPE instead of ending the process, and the
// trap printed a backtrace. Now every command ends on a closed pipe as a Unix tool does when
// SIGPIPE is left alone: killed by SIGPIPE (status 141 in the shell), nothing on stderr.

/// Writes all of `bytes` to standard output; on a closed pipe, ends lineupctl (`closedPipe`).
func writeOut(_ bytes: some DataProtocol) {
    var data = Array(bytes)
    var offset = 0
    while offset < data.count {
        let written = data.withUnsafeMutableBytes { raw in
            write(STDOUT_FILENO, raw.baseAddress! + offset, raw.count - offset)
        }
        if written < 0 {
            if errno == EINTR { continue }
            if errno == EPIPE { closedPipe() }
            // Standard output is gone some other way (a full disk, a revoked terminal):
            // one line on stderr and a failing status, never a trap.
            printError("cannot write to standard output: \(String(cString: strerror(errno)))")
            exit(1)
        }
        offset += written
    }
    data.removeAll()
}

/// `writeOut` of text.
func writeOut(_ text: String) { writeOut(Data(text.utf8)) }

/// The reader of standard output went away: end as SIGPIPE ends a process that keeps its
/// default action, whatever the action was (status 141 in the shell; nothing on stderr).
func closedPipe() -> Never {
    signal(SIGPIPE, SIG_DFL)
    var pipe = sigset_t()
    sigemptyset(&pipe)
    sigaddset(&pipe, SIGPIPE)
    pthread_sigmask(SIG_UNBLOCK, &pipe, nil)
    raise(SIGPIPE)
    _exit(128 + SIGPIPE)  // not reached: the signal ends the process
}

/// An export's sink on standard output: ends lineupctl as `writeOut` does once the reader went
/// away (the sink stops writing quietly on EPIPE, and the export returns).
func endIfReaderLeft(_ sink: ByteSink) {
    if sink.closedByReader { closedPipe() }
}

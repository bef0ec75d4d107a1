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

/// Writes all of `bytes` to standard output; on a closed pipe, ends lineupctl
/// (`StandardOutput.closedPipe`); on another failure, one line on stderr and exit status 1.
func writeOut(_ bytes: some DataProtocol) {
    StandardOutput.write(bytes, program: "lineupctl")
}

/// `writeOut` of text.
func writeOut(_ text: String) { writeOut(Data(text.utf8)) }

/// The reader of standard output went away (`StandardOutput.closedPipe`).
func closedPipe() -> Never { StandardOutput.closedPipe() }

/// An export's sink on standard output: ends lineupctl as `writeOut` does once the reader went
/// away (the sink stops writing quietly on EPIPE, and the export returns).
func endIfReaderLeft(_ sink: ByteSink) {
    if sink.closedByReader { closedPipe() }
}

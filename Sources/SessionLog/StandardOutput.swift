import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// Every byte a shipped tool prints on standard output goes through `StandardOutput.write`:
// Foundation's `FileHandle.write` traps on any error (`try!`), and a reader that closes the
// pipe early (`lineupctl stats | head -1`) is no error. Where SIGPIPE is ignored (swift-nio
// ignores it for the whole process once the lab store is opened, as in lineup-sync; a parent
// may have ignored it before starting the tool), the write fails with EPIPE instead of ending
// the process, and the trap printed a backtrace (issue 32). Now every tool ends on a closed
// pipe as a Unix tool does when SIGPIPE is left alone: killed by SIGPIPE (status 141 in the
// shell), nothing on stderr. ClosedPipeTests checks no shipped source writes otherwise.

public enum StandardOutput {
    /// Writes all of `bytes` to standard output; on a closed pipe, ends the process
    /// (`closedPipe`); on another failure (a full disk, a revoked terminal), one line on stderr
    /// naming `program`, and exit status 1, never a trap.
    public static func write(_ bytes: some DataProtocol, program: String) {
        var data = Array(bytes)
        var offset = 0
        while offset < data.count {
            let written = data.withUnsafeMutableBytes { raw in
                Glibc.write(STDOUT_FILENO, raw.baseAddress! + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE { closedPipe() }
                let line = "\(program): cannot write to standard output: \(String(cString: strerror(errno)))\n"
                _ = line.withCString { Glibc.write(STDERR_FILENO, $0, strlen($0)) }
                exit(1)
            }
            offset += written
        }
        data.removeAll()
    }

    /// The reader of standard output went away: end as SIGPIPE ends a process that keeps its
    /// default action, whatever the action was (status 141 in the shell; nothing on stderr).
    public static func closedPipe() -> Never {
        signal(SIGPIPE, SIG_DFL)
        var pipe = sigset_t()
        sigemptyset(&pipe)
        sigaddset(&pipe, SIGPIPE)
        pthread_sigmask(SIG_UNBLOCK, &pipe, nil)
        raise(SIGPIPE)
        _exit(128 + SIGPIPE)  // not reached: the signal ends the process
    }
}

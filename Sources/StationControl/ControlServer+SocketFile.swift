import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ControlServer {
    // MARK: Setting up the file

    func removeStaleSocket(_ path: String) throws(ControlServerError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path) }
        let probe = socket(AF_UNIX, socketStreamType, 0)
        guard probe >= 0 else { throw .system("socket", path: path, errno: errno) }
        defer { close(probe) }
        guard var address = UnixAddress(path) else { throw .pathTooLong(path) }
        if address.connect(probe) == 0 { throw .alreadyRunning(path) }
        let code = errno
        // ECONNREFUSED: nobody listens, the file is left from a daemon that died.
        guard code == ECONNREFUSED else { throw .system("connect", path: path, errno: code) }
        guard unlink(path) == 0 || errno == ENOENT else { throw .system("unlink", path: path, errno: errno) }
    }

    func giveToGroup(_ path: String, _ group: String) -> [String] {
        guard let gid = groupID(group) else {
            return ["group '\(group)' does not exist; \(path) keeps the daemon's own group"]
        }
        // Under systemd the service's own group is usually the one wanted, and its
        // SystemCallFilter=~@privileged refuses chown outright: skip the call when it would
        // change nothing, so the journal does not carry a warning on every start.
        var info = stat()
        if stat(path, &info) == 0, info.st_gid == gid { return [] }
        if chown(path, uid_t.max, gid) != 0 {
            let code = errno
            return [
                "could not give \(path) to group '\(group)' (\(errnoText(code))); it keeps the daemon's own group"
            ]
        }
        return []
    }
}

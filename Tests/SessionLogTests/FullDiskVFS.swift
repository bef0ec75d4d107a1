import Foundation
import GRDBSQLite
import Synchronization

/// A disk that fills on demand, under SQLite itself: a VFS that passes every call to the
/// default (unix) VFS, except that a write to an armed log's database file or WAL returns
/// `SQLITE_FULL`, as the unix VFS does when `write` fails with ENOSPC. SQLite, GRDB and the
/// writer then take the very paths they take on a full card: a commit whose WAL frames
/// cannot be written, a checkpoint that cannot grow the database file.
///
/// Open a log through it with `FullDiskVFS.uri(path)`; `fill` and `free` arm and disarm it.
/// Every other file, and every log not armed, is untouched.
enum FullDiskVFS {
    static let name = "lineup-full-disk"

    enum Part: Sendable { case database, wal }

    /// The path that opens `path` through this VFS (SQLite takes URIs: USE_URI is on).
    static func uri(_ path: String) -> String {
        register()
        return "file:\(path)?vfs=\(name)"
    }

    /// From now on, writes to `part` of the log at `path` fail.
    static func fill(_ path: String, _ part: Part) {
        armed.withLock { _ = $0[path, default: []].insert(part) }
    }

    /// Space again: writes succeed.
    static func free(_ path: String) {
        armed.withLock { _ = $0.removeValue(forKey: path) }
    }

    /// Writes refused so far to the log at `path`, by part.
    static func refusedWrites(_ path: String) -> [Part: Int] {
        refused.withLock { $0[path] ?? [:] }
    }

    // MARK: The VFS

    private static let armed = Mutex<[String: Set<Part>]>([:])
    private static let refused = Mutex<[String: [Part: Int]]>([:])
    /// Open files by the number kept in their header: the log and part each one is.
    private static let files = Mutex<(next: Int, all: [Int: (path: String, part: Part)])>((1, [:]))

    /// Our file is SQLite's `sqlite3_file` header, our file number, then the real file.
    private static let headerSize = 16
    private static let registered = Mutex<Bool>(false)

    private static func register() {
        registered.withLock { done in
            guard !done else { return }
            done = true
            guard let base = sqlite3_vfs_find(nil) else { fatalError("SQLite has no default VFS") }
            let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
            vfs.initialize(to: base.pointee)
            vfs.pointee.zName = UnsafePointer(strdup(name))
            vfs.pointee.szOsFile = Int32(headerSize) + base.pointee.szOsFile
            vfs.pointee.pNext = nil
            vfs.pointee.pAppData = UnsafeMutableRawPointer(base)
            vfs.pointee.xOpen = { vfs, fileName, file, flags, outFlags in
                guard let vfs, let file, let base = vfs.pointee.pAppData?.assumingMemoryBound(to: sqlite3_vfs.self)
                else { return SQLITE_MISUSE }
                let real = FullDiskVFS.real(file)
                let rc = base.pointee.xOpen(base, fileName, real, flags, outFlags)
                guard rc == SQLITE_OK, real.pointee.pMethods != nil else {
                    file.pointee.pMethods = nil
                    return rc
                }
                var number = 0
                if let fileName {
                    let text = String(cString: fileName)
                    let part: Part? =
                        flags & SQLITE_OPEN_MAIN_DB != 0 ? .database : (flags & SQLITE_OPEN_WAL != 0 ? .wal : nil)
                    if let part {
                        let path = part == .wal && text.hasSuffix("-wal") ? String(text.dropLast(4)) : text
                        number = FullDiskVFS.files.withLock { files in
                            files.next += 1
                            files.all[files.next] = (path, part)
                            return files.next
                        }
                    }
                }
                UnsafeMutableRawPointer(file).storeBytes(of: number, toByteOffset: 8, as: Int.self)
                file.pointee.pMethods = UnsafePointer(FullDiskVFS.methods)
                return SQLITE_OK
            }
            sqlite3_vfs_register(vfs, 0)
        }
    }

    private static func real(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<sqlite3_file> {
        (UnsafeMutableRawPointer(file) + headerSize).assumingMemoryBound(to: sqlite3_file.self)
    }

    private static func number(_ file: UnsafeMutablePointer<sqlite3_file>) -> Int {
        UnsafeMutableRawPointer(file).load(fromByteOffset: 8, as: Int.self)
    }

    /// True when this write must fail: the file's log and part are armed.
    private static func full(_ file: UnsafeMutablePointer<sqlite3_file>) -> Bool {
        let number = number(file)
        guard number != 0, let (path, part) = files.withLock({ $0.all[number] }) else { return false }
        guard armed.withLock({ $0[path]?.contains(part) ?? false }) else { return false }
        refused.withLock { $0[path, default: [:]][part, default: 0] += 1 }
        return true
    }

    /// Each method calls the real file's; only `xWrite` may refuse, and `xClose` forgets.
    nonisolated(unsafe) private static let methods: UnsafeMutablePointer<sqlite3_io_methods> = {
        let m = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        m.initialize(
            to: sqlite3_io_methods(
                iVersion: 3,
                xClose: { file in
                    let number = FullDiskVFS.number(file!)
                    if number != 0 { FullDiskVFS.files.withLock { _ = $0.all.removeValue(forKey: number) } }
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xClose!(real)
                },
                xRead: { file, buffer, amount, offset in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xRead!(real, buffer, amount, offset)
                },
                xWrite: { file, buffer, amount, offset in
                    if FullDiskVFS.full(file!) { return SQLITE_FULL }
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xWrite!(real, buffer, amount, offset)
                },
                xTruncate: { file, size in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xTruncate!(real, size)
                },
                xSync: { file, flags in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xSync!(real, flags)
                },
                xFileSize: { file, size in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xFileSize!(real, size)
                },
                xLock: { file, level in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xLock!(real, level)
                },
                xUnlock: { file, level in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xUnlock!(real, level)
                },
                xCheckReservedLock: { file, out in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xCheckReservedLock!(real, out)
                },
                xFileControl: { file, op, argument in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xFileControl!(real, op, argument)
                },
                xSectorSize: { file in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xSectorSize!(real)
                },
                xDeviceCharacteristics: { file in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xDeviceCharacteristics!(real)
                },
                xShmMap: { file, page, size, extend, out in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xShmMap!(real, page, size, extend, out)
                },
                xShmLock: { file, offset, n, flags in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xShmLock!(real, offset, n, flags)
                },
                xShmBarrier: { file in
                    let real = FullDiskVFS.real(file!)
                    real.pointee.pMethods.pointee.xShmBarrier!(real)
                },
                xShmUnmap: { file, delete in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xShmUnmap!(real, delete)
                },
                xFetch: { file, offset, amount, out in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xFetch!(real, offset, amount, out)
                },
                xUnfetch: { file, offset, pointer in
                    let real = FullDiskVFS.real(file!)
                    return real.pointee.pMethods.pointee.xUnfetch!(real, offset, pointer)
                }))
        return m
    }()
}

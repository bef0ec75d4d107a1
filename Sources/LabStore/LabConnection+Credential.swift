import Foundation

extension LabConnection {
    /// Whether anyone but the file's owner and `reader` (this process's user) may open the
    /// connection file, judged by its mode and, when it has one, its POSIX access ACL.
    ///
    /// Why the ACL: systemd hands a credential (`LoadCredential=`, as lineup-sync.service and
    /// lineup-lab.service get theirs) to a service's user as a root-owned file of mode 0400
    /// with an ACL entry `user:SERVICE:r--` wherever the credentials' file system has ACLs
    /// (systemd's `write_credential`: fchmod 0400, then `fd_add_uid_acl_permission`; it chowns
    /// the file to the user only where there are none, on ramfs). `stat` then
    /// shows the ACL's mask in the group bits, mode 440, though no group may read the file;
    /// the mode alone would refuse systemd's own delivery. The ACL says who may: a file
    /// readable through it by no one but its owner and the reading user is private.
    public static func othersMayOpen(path: String, mode: mode_t, reader: uid_t) -> Bool {
        if mode & 0o007 != 0 { return true }
        if mode & 0o070 == 0 { return false }
        // Group bits with no ACL are the group's: the group may read.
        guard let acl = accessACL(path: path) else { return true }
        return acl.grantsAnyoneBut(reader: reader)
    }

    /// The file's POSIX access ACL as the kernel stores it (the `system.posix_acl_access`
    /// extended attribute), or nil when it has none or it cannot be read.
    static func accessACL(path: String) -> AccessACL? {
        // getxattr(2) is in glibc but not in Swift's Glibc module (no sys/xattr.h there); the
        // null handle is RTLD_DEFAULT, the process's global scope.
        typealias GetXattr =
            @convention(c) (
                UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutableRawPointer?, Int
            ) -> Int
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "getxattr") else { return nil }
        let getxattr = unsafeBitCast(symbol, to: GetXattr.self)
        // Version 4 bytes, 8 per entry; a file has a handful of entries, 64 is more than any.
        var buffer = [UInt8](repeating: 0, count: 4 + 8 * 64)
        let size = buffer.withUnsafeMutableBytes {
            getxattr(path, "system.posix_acl_access", $0.baseAddress, $0.count)
        }
        guard size > 0 else { return nil }
        return AccessACL(bytes: Array(buffer[0..<size]))
    }
}

/// A POSIX access ACL in the kernel's extended-attribute form: a little-endian version (2),
/// then entries of tag (16 bits), permissions (16 bits) and id (32 bits).
struct AccessACL: Equatable {
    struct Entry: Equatable {
        var tag: UInt16
        var permissions: UInt16
        var id: UInt32
    }

    static let userObject: UInt16 = 0x01
    static let user: UInt16 = 0x02
    static let groupObject: UInt16 = 0x04
    static let group: UInt16 = 0x08
    static let mask: UInt16 = 0x10
    static let other: UInt16 = 0x20

    var entries: [Entry]

    init(entries: [Entry]) { self.entries = entries }

    /// Nil when the bytes are not a version-2 ACL.
    init?(bytes: [UInt8]) {
        func little(_ at: Int, _ count: Int) -> UInt32 {
            (0..<count).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
        }
        guard bytes.count >= 4, (bytes.count - 4) % 8 == 0, little(0, 4) == 2 else { return nil }
        entries = stride(from: 4, to: bytes.count, by: 8).map {
            Entry(tag: UInt16(little($0, 2)), permissions: UInt16(little($0 + 2, 2)), id: little($0 + 4, 4))
        }
    }

    /// The bytes as the kernel stores them (the inverse of `init(bytes:)`).
    var bytes: [UInt8] {
        func little(_ value: UInt32, _ count: Int) -> [UInt8] { (0..<count).map { UInt8((value >> (8 * $0)) & 0xff) } }
        return little(2, 4)
            + entries.flatMap { little(UInt32($0.tag), 2) + little(UInt32($0.permissions), 2) + little($0.id, 4) }
    }

    /// Whether the ACL gives any access to someone other than the file's owner and `reader`:
    /// the owning group, a named group or another named user (each as far as the mask lets
    /// it), or others.
    func grantsAnyoneBut(reader: uid_t) -> Bool {
        let mask = entries.first { $0.tag == Self.mask }?.permissions ?? 0o7
        return entries.contains { entry in
            switch entry.tag {
            case Self.userObject: false
            case Self.user: entry.id != UInt32(reader) && entry.permissions & mask != 0
            case Self.groupObject, Self.group: entry.permissions & mask != 0
            case Self.mask: false
            case Self.other: entry.permissions != 0
            default: true  // a tag this does not know: refuse rather than guess
            }
        }
    }
}

import Foundation
import SessionLog
import Synchronization

/// Rows a store migrated before v9 may hold that no station writes (a trial whose layout is
/// not stations, a trial station off the board): since v9 the store refuses them at sync, and
/// the append-only store cannot remove those it already has. A reading leaves each one out and
/// names it once, on standard error, so one station's damage never blocks a reading over many
/// stations (issue 33: one row naming station 300000000 made `export --lab` fail for everyone).
public final class LabDamage: Sendable {
    /// Where each left-out row is named: standard error unless a test hands in its own.
    public let say: @Sendable (String) -> Void
    private let named = Mutex<Set<String>>([])

    public init(say: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
    {
        self.say = say
    }

    /// Leaves out `row` (a trial, or a trial's station), named once however often it is read.
    func leaveOut(store: String, _ row: String, because reason: String) {
        guard named.withLock({ $0.insert(row).inserted }) else { return }
        say("the lab store \(store) holds \(row) with \(reason) (stored before v9): left out of this reading")
    }

    /// The rows left out so far.
    public var leftOut: Int { named.withLock { $0.count } }
}

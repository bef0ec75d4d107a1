import Foundation
import Testing
import TrainingEngine

@testable import SessionLog

/// The commitment's bytes as docs/figures.md ("Committed layouts") defines them, and its worked
/// example's digest as `sha256sum` printed it.
@Suite struct LayoutCommitmentTests {
    static let stations = [
        LayoutCommitment.Station(station: 3, kind: .blank, label: nil),
        LayoutCommitment.Station(station: 1, kind: .control, label: "C-1"),
        LayoutCommitment.Station(station: 2, kind: .target, label: "T-7"),
    ]
    static let salt = String(repeating: "01", count: 32)

    @Test func theBytesAreTheDocumentedLinesInStationOrder() {
        let bytes = LayoutCommitment.bytes(
            session: "0873AB05-1C2D-4E5F-8A9B-0C1D2E3F4A5B", trial: 2, stations: Self.stations, salt: Self.salt)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "lineup layout commitment v1\nsession 0873ab05-1c2d-4e5f-8a9b-0c1d2e3f4a5b\ntrial 2\n"
                + "station 1 control C-1\nstation 2 target T-7\nstation 3 blank \nsalt \(Self.salt)\n")
    }

    @Test func theWorkedExamplesDigestIsSha256sums() {
        #expect(
            LayoutCommitment.digest(
                session: "0873ab05-1c2d-4e5f-8a9b-0c1d2e3f4a5b", trial: 2, stations: Self.stations, salt: Self.salt)
                == "cd19302dfb11ff137bc72c2d1947de2f5b6890865641257f58fc59515db5af96")
    }

    @Test func anotherTrialOrSaltOrKindGivesAnotherDigest() {
        let base = LayoutCommitment.digest(session: "s", trial: 2, stations: Self.stations, salt: Self.salt)
        #expect(LayoutCommitment.digest(session: "s", trial: 3, stations: Self.stations, salt: Self.salt) != base)
        #expect(
            LayoutCommitment.digest(
                session: "s", trial: 2, stations: Self.stations, salt: String(repeating: "02", count: 32)) != base)
        var moved = Self.stations
        moved[1].kind = .target
        moved[2].kind = .control
        #expect(LayoutCommitment.digest(session: "s", trial: 2, stations: moved, salt: Self.salt) != base)
    }

    @Test func saltsAre32RandomBytesInHex() {
        let a = LayoutCommitment.newSalt()
        #expect(a.count == 64 && a.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(a != LayoutCommitment.newSalt())
    }
}

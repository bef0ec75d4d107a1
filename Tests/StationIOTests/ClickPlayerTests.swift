import Foundation
import Glibc
import LineupBench
import StationConfig
import Testing

@testable import StationIO

/// Points ALSA at the fixture configuration before the first PCM of this process is opened.
let alsaFixture: Void = {
    let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/asoundrc")
    setenv("ALSA_CONFIG_PATH", fixture.path, 1)
}()

func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("lineup-tests-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Waits for a condition other threads make true, for at most `seconds`.
func eventually(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let until = MonotonicClock.now() + UInt64(seconds * 1e9)
    while MonotonicClock.now() < until {
        if condition() { return true }
        usleep(2000)
    }
    return condition()
}

/// Writes the rest of a click the way the hot loop does: poll the device, then continue.
func finishClick(_ player: ClickPlayer) {
    var rounds = 0
    while player.isWritingClick, rounds < 1000, let fds = player.pollDescriptors {
        _ = poll(fds.baseAddress, nfds_t(fds.count), 100)
        player.continueClick()
        rounds += 1
    }
}

/// A real ALSA stream that fails the way a device does, when told to.
final class FaultyPCM: PCMDevice {
    let real: ALSAPlayback
    var failNextWrites: [Int32] = []
    var forcedState: PCMState?

    init() throws {
        real = try ALSAPlayback(device: "null", rate: 48_000, channels: 2, periodFrames: 64, periods: 2)
    }

    var negotiated: NegotiatedAudio { real.negotiated }
    var state: PCMState { forcedState ?? real.state }
    func write(_ frames: UnsafePointer<Int16>, count: Int) -> Int {
        if !failNextWrites.isEmpty { return -Int(failNextWrites.removeFirst()) }
        return real.write(frames, count: count)
    }
    func prepare() -> Int32 {
        forcedState = nil
        return real.prepare()
    }
    func resume() -> Int32 { -ENOSYS }
    func drop() -> Int32 { real.drop() }
    func triggerAndDelay() -> (trigger: UInt64, delay: Int) { real.triggerAndDelay() }
    var pollDescriptors: UnsafeMutableBufferPointer<pollfd> { real.pollDescriptors }
    func isWritable() -> Bool { real.isWritable() }
}

/// Hands out prepared devices in order; throws "gone" when the list is empty.
final class DeviceSequence: @unchecked Sendable {
    private var devices: [() throws -> any PCMDevice]
    private let lock = NSLock()
    private(set) var opens = 0

    init(_ devices: [() throws -> any PCMDevice]) { self.devices = devices }

    func open() throws(StationIOError) -> any PCMDevice {
        lock.lock()
        defer { lock.unlock() }
        opens += 1
        guard !devices.isEmpty else {
            throw StationIOError(.audio, "audio device \"test\": cannot open: No such device")
        }
        let next = devices.removeFirst()
        do { return try next() } catch { throw StationIOError(.audio, "\(error)") }
    }
}

@Suite(.serialized) struct ClickPlayerTests {
    init() { _ = alsaFixture }

    @Test func theSamplesALSAAcceptedAreTheRenderedClick() throws {
        let dir = temporaryDirectory()
        let out = dir.appendingPathComponent("click.raw")
        var negotiated: NegotiatedAudio?
        do {
            let spec = AudioSpec(device: "clickfile:FILE=\(out.path)")
            let player = try ClickPlayer(audio: spec, keepTrying: false)
            negotiated = player.negotiated
            let outcome = player.click(edgeTimestamp: MonotonicClock.now())
            guard case .played(let record) = outcome else {
                Issue.record("click did not play: \(outcome)")
                return
            }
            #expect(record.handedTimestamp >= record.edgeTimestamp)
            finishClick(player)
            #expect(player.isWritingClick == false)
        }  // the player closes the stream here, and the file plugin writes out what it holds
        let n = try #require(negotiated)
        let expected = ClickRendering.render(.standard, rate: n.rate, channels: n.channels)
        let data = try Data(contentsOf: out)
        let written = data.withUnsafeBytes { raw in Array(raw.bindMemory(to: Int16.self)) }
        #expect(written.count >= expected.count)
        #expect(
            written.prefix(expected.count).elementsEqual(expected),
            "the file holds other samples than the rendered click")
    }

    @Test func theTimerCueIsItsOwnSoundThroughTheSameStream() throws {
        let dir = temporaryDirectory()
        let out = dir.appendingPathComponent("cue.raw")
        var negotiated: NegotiatedAudio?
        do {
            let player = try ClickPlayer(audio: AudioSpec(device: "clickfile:FILE=\(out.path)"), keepTrying: false)
            negotiated = player.negotiated
            #expect(player.cue(.exerciseEnd))
            finishClick(player)
            #expect(player.cuesPlayed == 1 && player.cuesFailed == 0)
        }
        let n = try #require(negotiated)
        let expected = ClickRendering.render(CueSound.exerciseEnd, rate: n.rate, channels: n.channels)
        let data = try Data(contentsOf: out)
        let written = data.withUnsafeBytes { raw in Array(raw.bindMemory(to: Int16.self)) }
        #expect(written.count >= expected.count)
        #expect(written.prefix(expected.count).elementsEqual(expected), "the file holds other samples than the cue")
        // Not mistakable for the click: half a second of two tones against a 12 ms burst, and
        // far lower (zero crossings per second).
        let click = ClickRendering.render(.standard, rate: n.rate, channels: 1)
        let cue = ClickRendering.render(CueSound.exerciseEnd, rate: n.rate, channels: 1)
        #expect(Double(cue.count) / Double(n.rate) >= 0.45)
        #expect(Double(click.count) / Double(n.rate) <= 0.02)
        func crossingsPerSecond(_ s: [Int16]) -> Double {
            let nonzero = s.filter { $0 != 0 }
            let crossings = zip(nonzero, nonzero.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
            return Double(crossings) / (Double(nonzero.count) / Double(n.rate))
        }
        #expect(crossingsPerSecond(cue) < 1000 && crossingsPerSecond(click) > 5000)
    }

    @Test func aCueNeverCutsAClickAndAClickCutsACue() throws {
        let faulty = try FaultyPCM()
        let player = try ClickPlayer(sound: .standard, opener: DeviceSequence([{ faulty }]).open, keepTrying: false)
        // A cue while the click is still being written is skipped and counted.
        guard case .played = player.click(edgeTimestamp: MonotonicClock.now()) else {
            Issue.record("the click did not play")
            return
        }
        // The click (576 frames) is longer than the device's buffer (128): still being written.
        try #require(player.isWritingClick)
        #expect(!player.cue(.exerciseEnd))
        #expect(player.cuesFailed == 1)
        finishClick(player)
        // A click during a cue plays at once.
        #expect(player.cue(.exerciseEnd))
        guard case .played = player.click(edgeTimestamp: MonotonicClock.now()) else {
            Issue.record("a cue held the click back")
            return
        }
        #expect(player.failedClicks == 0)
    }

    @Test func underrunAndSuspendAreRecoveredInPlace() throws {
        let faulty = try FaultyPCM()
        let devices = DeviceSequence([{ faulty }])
        let player = try ClickPlayer(sound: .standard, opener: devices.open, keepTrying: false)
        faulty.failNextWrites = [EPIPE]
        guard case .played(let first) = player.click(edgeTimestamp: MonotonicClock.now()) else {
            Issue.record("an underrun lost the click")
            return
        }
        #expect(first.recoveries == 1)
        #expect(player.recoveredUnderruns == 1)
        finishClick(player)
        faulty.forcedState = .suspended
        guard case .played(let second) = player.click(edgeTimestamp: MonotonicClock.now()) else {
            Issue.record("a suspend lost the click")
            return
        }
        #expect(second.recoveries == 1)
        #expect(player.failedClicks == 0)
    }

    @Test func aVanishedDeviceIsReportedThenReopened() throws {
        let first = try FaultyPCM()
        let devices = DeviceSequence([{ first }, { throw StationIOError(.audio, "still gone") }, { try FaultyPCM() }])
        let player = try ClickPlayer(sound: .standard, opener: devices.open, keepTrying: true, backoff: (0.005, 0.02))
        first.failNextWrites = [ENODEV]
        let outcome = player.click(edgeTimestamp: 42)
        #expect(outcome == .failed(edgeTimestamp: 42, .deviceUnavailable))
        #expect(eventually { player.isAvailable })
        guard case .played = player.click(edgeTimestamp: MonotonicClock.now()) else {
            Issue.record("no click after the device came back")
            return
        }
        #expect(player.failedClicks == 1)
        #expect(player.reopenAttempts >= 2)
    }

    @Test func aDeviceMissingAtStartIsRetriedAndEachRewardReported() throws {
        let devices = DeviceSequence([{ throw StationIOError(.audio, "not yet") }, { try FaultyPCM() }])
        let player = try ClickPlayer(sound: .standard, opener: devices.open, keepTrying: true, backoff: (0.005, 0.02))
        // Rewards before the device appears fail, each one counted.
        var failedBefore = 0
        while !player.isAvailable, failedBefore < 10_000 {
            if case .failed(_, .deviceUnavailable) = player.click(edgeTimestamp: 1) { failedBefore += 1 }
            usleep(1000)
        }
        #expect(eventually { player.isAvailable })
        guard case .played = player.click(edgeTimestamp: MonotonicClock.now()) else {
            Issue.record("no click once the device appeared")
            return
        }
        #expect(player.failedClicks == UInt64(failedBefore))
    }

    @Test func aMissingDeviceWithoutRetryIsOneClearError() {
        #expect {
            _ = try ClickPlayer(audio: AudioSpec(device: "hw:CARD=NoSuchCard,DEV=0"), keepTrying: false)
        } throws: { error in
            let message = "\(error)"
            return message.contains("hw:CARD=NoSuchCard,DEV=0") && message.contains("cannot open")
        }
    }

    @Test func theHotLoopUnderAStormAccountsForEveryEdge() throws {
        var settings = ClickBenchmark.Settings()
        settings.clicks = 30
        settings.stormEdgesPerSecond = 5_000
        settings.realtime = false
        let result = try ClickBenchmark.run(settings)
        #expect(result.handedLatencies.count == 30)
        #expect(result.failedClicks == 0)
        #expect(result.droppedAtSource == 0 && result.ringOverflows == 0)
        #expect(result.edgesLogged == result.edgesRead)
        // Every pulse (two edges each, warm-up included) and every storm edge was read.
        #expect(result.edgesRead == UInt64(2 * (30 + ClickBenchmark.warmUpClicks)) + result.stormEdgesInjected)
    }
}

@Suite struct GPIOLineupTests {
    @Test func aLineNoChipHasIsNamedInTheError() {
        #expect {
            _ = try GPIOLineup(inputs: [InputLine(locator: .name("GPIO_NOT_THERE"))])
        } throws: { error in
            guard let e = error as? StationIOError else { return false }
            return e.code == .gpio && e.message.contains("GPIO_NOT_THERE") && e.message.contains("chips found")
        }
    }

    @Test func aChipLabelNoChipHasIsNamedInTheError() {
        #expect {
            _ = try GPIOLineup(inputs: [InputLine(locator: .chipLabel("pinctrl-nowhere", offset: 3))])
        } throws: { error in
            "\(error)".contains("pinctrl-nowhere")
        }
    }

    @Test func theLibraryVersionIsKnown() {
        #expect(GPIOLineup.libraryVersion.contains("API"))
    }
}

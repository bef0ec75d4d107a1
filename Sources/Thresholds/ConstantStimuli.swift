// The method of constant stimuli: chosen rungs, each presented the same number of times, in
// blocks that hold every rung once (and any catch trials) shuffled by the caller's seeded
// generator, so the order is balanced over the session and the same for the same seed.

public struct ConstantStimuli: Sendable, Hashable {
    public let ladder: DilutionLadder
    /// The rungs presented, each once per block.
    public let rungs: [Int]
    /// Blocks: each rung is presented this many times.
    public let blocks: Int
    /// Catch trials (no target) in each block.
    public let catchTrialsPerBlock: Int

    public init(ladder: DilutionLadder, rungs: [Int], blocks: Int, catchTrialsPerBlock: Int = 0)
        throws(ThresholdError)
    {
        guard rungs.count >= 2 else { throw .rules("constant stimuli need at least 2 rungs, have \(rungs.count)") }
        for r in rungs where !(0..<ladder.count).contains(r) {
            throw .rules("rung \(r) is not on the ladder (rungs 0 to \(ladder.count - 1))")
        }
        guard Set(rungs).count == rungs.count else { throw .rules("the rungs \(rungs) name a rung twice") }
        guard blocks >= 1 else { throw .rules("blocks must be at least 1, not \(blocks)") }
        guard catchTrialsPerBlock >= 0 else {
            throw .rules("catch trials per block must be 0 or more, not \(catchTrialsPerBlock)")
        }
        self.ladder = ladder
        self.rungs = rungs
        self.blocks = blocks
        self.catchTrialsPerBlock = catchTrialsPerBlock
    }

    /// The session's trials in order: each block every rung once and its catch trials, shuffled.
    public func order(using random: inout some RandomNumberGenerator) -> [NextTrial] {
        var all: [NextTrial] = []
        all.reserveCapacity(blocks * (rungs.count + catchTrialsPerBlock))
        for _ in 0..<blocks {
            var block = rungs.map { NextTrial.target(rung: $0) }
            block += [NextTrial](repeating: .catchTrial, count: catchTrialsPerBlock)
            random.shuffleInPlace(&block)
            all += block
        }
        return all
    }
}

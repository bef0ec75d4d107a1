import CALSA
import Foundation
import ProgramFiles
import StationControl
import StationIO
import TrainingEngine

// `about`: what this lineupd offers, so lineupctl asks the running station rather than
// guessing its log and its programs directory from its own defaults.
extension StationService {
    public func about() -> StationAbout {
        StationAbout(
            log: Self.absolute(options.databasePath), programsDirectory: options.programsDirectory.map(Self.absolute),
            programs: offeredPrograms())
    }

    /// `version`: the libraries this lineupd was built with, as `lineupctl version` prints its own.
    public func version() -> StationVersion {
        StationVersion(
            protocolVersion: ControlProtocol.version, libgpiod: GPIOLineup.libraryVersion,
            alsaLib: String(cString: snd_asoundlib_version()))
    }

    /// Every program `session start --program NAME` would be given, found and checked as
    /// `loadProgram` finds and checks it: the built-ins first, then each `NAME.toml` of the
    /// programs directory (read again at each request, as each session start reads it).
    func offeredPrograms() -> [OfferedProgram] {
        var offered: [OfferedProgram] = []
        for name in Program.builtinNames {
            do {
                if let program = try Program.builtin(named: name) {
                    offered.append(OfferedProgram(name: name, source: "built-in", text: program.text, refused: nil))
                }
            } catch {
                offered.append(OfferedProgram(name: name, source: "built-in", text: nil, refused: "\(error)"))
            }
        }
        guard let directory = options.programsDirectory,
            let files = try? FileManager.default.contentsOfDirectory(atPath: directory)
        else { return offered }
        // loadProgram takes NAME.toml and refuses names starting with a dot.
        for file in files.sorted() where file.hasSuffix(".toml") && !file.hasPrefix(".") {
            let name = String(file.dropLast(".toml".count))
            let path = Self.absolute(directory + "/" + file)
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                offered.append(
                    OfferedProgram(
                        name: name, source: path, text: nil, refused: "\(path): cannot be read (permissions?)"))
                continue
            }
            var refused: String? = nil
            if Program.builtinNames.contains(name) {
                refused = "not offered: lineupd uses the built-in \(name) first"
            } else {
                do {
                    let program = try Program.parse(toml: text, source: path)
                    try program.validate(stationCount: inputs.stationCount)
                } catch {
                    refused = "\(error)"
                }
            }
            offered.append(OfferedProgram(name: name, source: path, text: text, refused: refused))
        }
        return offered
    }

    /// A path as the daemon's working directory resolves it, so another process can find it.
    static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}

import Foundation
import Testing

/// packaging/deb/build.sh, from the debug build: the package's files, owners, modes and control
/// file as dpkg-deb reads them, and the one Swift runtime its binaries share, so a broken package
/// fails here before the emulated-hardware tier installs one (with the manual pages and xz that
/// this fast build leaves out).
@Suite(.serialized, .ownThreads) struct DebPackageTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs a program to its end: its standard output, and its standard error kept apart in a
    /// file (two pipes read one after the other could fill and stall it).
    func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (
        status: Int32, output: String, errors: String
    ) {
        let errorsFile = FileManager.default.temporaryDirectory.appendingPathComponent("deb-err-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: errorsFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorsFile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = try FileHandle(forWritingTo: errorsFile)
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errors = try String(contentsOf: errorsFile, encoding: .utf8)
        return (process.terminationStatus, String(decoding: data, as: UTF8.self), errors)
    }

    func tools() -> Bool {
        for tool in ["/usr/bin/dpkg-deb", "/usr/bin/dpkg-shlibdeps"] where !FileManager.default.fileExists(atPath: tool)
        {
            Issue.record("\(tool) is missing: install Debian's dpkg-dev (.ci/run does)")
            return false
        }
        let debug = root.appendingPathComponent(".build/debug/lineup-web").path
        guard FileManager.default.isExecutableFile(atPath: debug) else {
            Issue.record("lineup-web is not built: run `swift build` before `swift test`")
            return false
        }
        return true
    }

    func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("deb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    var script: String { root.appendingPathComponent("packaging/deb/build.sh").path }
    var debug: String { root.appendingPathComponent(".build/debug").path }

    /// A board has no Swift toolchain: every binary loads the runtime the package ships, as the
    /// dynamic loader resolves it from the unpacked files (no LD_LIBRARY_PATH, the toolchain on
    /// this machine in no search path of theirs), and runs from there: lineupd a simulated block.
    /// (Part of the package's test: one build of the package serves both.)
    func checkTheBinariesLoadThePackagesOwnRuntime(unpacked root: URL, scratch out: URL) throws {
        let unpacked = root.resolvingSymlinksInPath()
        let shipped = unpacked.appendingPathComponent("usr/lib/lineup/swift").path + "/"
        let bare = ["PATH": "/usr/bin:/bin"]
        let runtime = ["libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime"]
        for binary in ["lineupd", "lineupctl", "lineup-web", "lineup-sync", "lineup-alerts"] {
            let path = unpacked.appendingPathComponent("usr/bin/\(binary)").path
            let ldd = try run("/usr/bin/ldd", [path], environment: bare)
            #expect(ldd.status == 0, "\(binary): \(ldd.errors)")
            #expect(!ldd.output.contains("not found"), "\(binary): \(ldd.output)")
            var swift: [String] = []
            for line in ldd.output.split(separator: "\n") {
                // "\tlibswiftCore.so => /path/libswiftCore.so (0x...)"
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard fields.count >= 3, fields[1] == "=>",
                    runtime.contains(where: { fields[0].hasPrefix($0) })
                else { continue }
                let resolved = URL(fileURLWithPath: String(fields[2])).standardizedFileURL.resolvingSymlinksInPath()
                #expect(resolved.path.hasPrefix(shipped), "\(binary) loads \(fields[0]) from \(fields[2])")
                swift.append(String(fields[0]))
            }
            #expect(swift.contains("libswiftCore.so") && swift.contains("libFoundation.so"), "\(binary): \(ldd.output)")
        }
        let lineupd = unpacked.appendingPathComponent("usr/bin/lineupd").path
        let db = out.appendingPathComponent("simulated.db").path
        let block = try run(
            lineupd, ["--simulate", "--trials", "10", "--seed", "7", "--fast", "--db", db], environment: bare)
        #expect(block.status == 0, "\(block.errors)")
        #expect(block.output.contains("logged as session "), "\(block.output)")
        let version = try run(
            unpacked.appendingPathComponent("usr/bin/lineupctl").path, ["--version"], environment: bare)
        #expect(version.status == 0 && !version.output.isEmpty, "\(version.errors)")

        // lineup-net runs the tool it is started as, or the one named first.
        let net = unpacked.appendingPathComponent("usr/bin/lineup-net").path
        for (tool, short) in [
            ("lineupctl", "ctl"), ("lineup-web", "web"), ("lineup-sync", "sync"), ("lineup-alerts", "alerts"),
        ] {
            let linked = try run(unpacked.appendingPathComponent("usr/bin/\(tool)").path, ["--help"], environment: bare)
            #expect(linked.status == 0 && linked.output.contains("USAGE: \(tool) "), "\(tool): \(linked.errors)")
            let named = try run(net, [short, "--help"], environment: bare)
            #expect(named.status == 0 && named.output == linked.output, "lineup-net \(short): \(named.errors)")
        }
        // Each speaks as the tool it was started as (ProcessInfo names them all lineup-net):
        // lineup-sync names the log with its own option.
        let connection = out.appendingPathComponent("lab-store.conf").path
        #expect(
            FileManager.default.createFile(
                atPath: connection,
                contents: Data("host = /nonexistent\ndatabase = lab\nuser = a\npassword = b\n".utf8),
                attributes: [.posixPermissions: 0o600]))
        let missing = out.appendingPathComponent("none.db").path
        let sync = try run(
            unpacked.appendingPathComponent("usr/bin/lineup-sync").path,
            ["--once", "--log", missing, "--connection", connection], environment: bare)
        #expect(
            sync.status == 2 && sync.errors == "lineup-sync: no session log at \(missing) (use --log PATH)\n",
            "\(sync.errors)")
        let unknown = try run(net, ["lineupd"], environment: bare)
        #expect(unknown.status == 64 && unknown.output.isEmpty, "\(unknown.output)")
        #expect(unknown.errors.hasPrefix("lineup-net: 'lineupd' is not one of its tools; "), "\(unknown.errors)")

        // ICU's data, trimmed to what the station uses (packaging/deb/icu-data.keep): its library
        // a quarter of the toolchain's, and the log's times in a board's local zone (its rules,
        // summer time) read as the toolchain's full ICU reads them. In UTC they would read
        // otherwise: the comparison says something.
        let icu = unpacked.appendingPathComponent("usr/lib/lineup/swift/lib_FoundationICU.so").path
        let icuSize = try FileManager.default.attributesOfItem(atPath: icu)[.size] as? Int ?? 0
        #expect(icuSize > 0 && icuSize < 15_000_000, "lib_FoundationICU.so is \(icuSize) bytes")
        let utc = try run(
            unpacked.appendingPathComponent("usr/bin/lineupctl").path, ["sessions", "--db", db],
            environment: bare.merging(["TZ": "UTC"]) { $1 })
        for zone in ["Asia/Kolkata", "Europe/Berlin", "America/Santiago", "Australia/Lord_Howe"] {
            for arguments in [["sessions", "--db", db], ["sessions", "--db", db, "--until", "2030-03-31T02:30"]] {
                let environment = bare.merging(["TZ": zone]) { $1 }
                let packaged = try run(
                    unpacked.appendingPathComponent("usr/bin/lineupctl").path, arguments, environment: environment)
                let toolchain = try run(debug + "/lineupctl", arguments, environment: environment)
                #expect(packaged.status == 0 && packaged.output == toolchain.output, "\(zone): \(packaged.errors)")
                #expect(packaged.output.contains("virtual dog"), "\(zone): \(packaged.output)")
            }
        }
        let kolkata = try run(
            unpacked.appendingPathComponent("usr/bin/lineupctl").path, ["sessions", "--db", db],
            environment: bare.merging(["TZ": "Asia/Kolkata"]) { $1 })
        #expect(kolkata.output.contains("+05:30") && !utc.output.contains("+05:30"), "\(kolkata.output)")
    }

    @Test func thePackageHoldsTheStationAndSaysWhatItNeeds() throws {
        guard tools() else { return }
        let out = try scratch()
        defer { try? FileManager.default.removeItem(at: out) }
        let build = try run(
            script, ["--bin-dir", debug, "--no-manual", "--uncompressed", "--out", out.path])
        #expect(build.status == 0, "\(build.errors)")
        let version = try run(debug + "/lineupctl", ["--version"]).output.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let arch = try run("/usr/bin/dpkg", ["--print-architecture"]).output.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let deb = out.appendingPathComponent("lineup_\(version)_\(arch).deb").path
        #expect(build.output.trimmingCharacters(in: .whitespacesAndNewlines) == deb)
        guard FileManager.default.fileExists(atPath: deb) else {
            Issue.record("no \(deb): \(build.errors)")
            return
        }

        // The control file: named and versioned as lineupctl says, Debian 12's library packages.
        let info = try run("/usr/bin/dpkg-deb", ["-I", deb])
        #expect(info.status == 0, "\(info.errors)")
        let control = try run("/usr/bin/dpkg-deb", ["-f", deb])
        #expect(control.output.contains("Package: lineup\n"))
        #expect(control.output.contains("Version: \(version)\n"))
        #expect(control.output.contains("Architecture: \(arch)\n"))
        let depends = control.output.split(separator: "\n").first { $0.hasPrefix("Depends: ") }.map(String.init) ?? ""
        // libstdc++6: the shipped Swift runtime's own need.
        for package in ["libgpiod2", "libasound2", "libsqlite3-0", "libc6", "libstdc++6", "systemd"] {
            #expect(
                depends.contains(package + " ") || depends.contains(package + ",") || depends.hasSuffix(package),
                "Depends lacks \(package): \(depends)")
        }
        for script in ["postinst", "prerm", "postrm"] {
            #expect(info.output.contains(" \(script)"), "no \(script) in \(info.output)")
        }

        // The files: where Debian puts them, root's, binaries executable and nothing else.
        let listing = try run("/usr/bin/dpkg-deb", ["-c", deb])
        #expect(listing.status == 0, "\(listing.errors)")
        var entries: [String: (mode: String, owner: String, target: String?)] = [:]
        for line in listing.output.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6 else { continue }
            // "lrwxrwxrwx root/root 0 DATE TIME ./usr/bin/lineupctl -> lineup-net"
            let target = fields.count == 8 && fields[6] == "->" ? String(fields[7]) : nil
            entries[String(fields[5])] = (String(fields[0]), String(fields[1]), target)
        }
        #expect(entries.values.allSatisfy { $0.owner == "root/root" }, "\(listing.output)")
        // Two binaries: lineupd, and lineup-net installed once as the four other tools (issue 35).
        for binary in ["lineupd", "lineup-net"] {
            #expect(entries["./usr/bin/\(binary)"]?.mode == "-rwxr-xr-x", "\(binary): \(listing.output)")
        }
        for tool in ["lineupctl", "lineup-web", "lineup-sync", "lineup-alerts"] {
            let entry = entries["./usr/bin/\(tool)"]
            #expect(entry?.mode == "lrwxrwxrwx" && entry?.target == "lineup-net", "\(tool): \(listing.output)")
        }
        // The station's programs only: the benchmarks (lineup-bench) and the lab's page are not
        // a station's.
        #expect(
            entries.keys.filter { $0.hasPrefix("./usr/bin/") && !$0.hasSuffix("/") }.sorted()
                == [
                    "./usr/bin/lineup-alerts", "./usr/bin/lineup-net", "./usr/bin/lineup-sync", "./usr/bin/lineup-web",
                    "./usr/bin/lineupctl", "./usr/bin/lineupd",
                ],
            "\(listing.output)")
        let files = [
            "./usr/lib/systemd/system/lineupd.service", "./usr/lib/systemd/system/lineup-web.service",
            "./usr/lib/systemd/system/lineup-sync.service", "./usr/lib/systemd/system/lineup-sync.timer",
            "./usr/lib/sysusers.d/lineup-sync.conf", "./usr/lib/systemd/system/lineup-alerts.service",
            "./usr/lib/sysusers.d/lineup-alerts.conf",
            "./usr/lib/sysusers.d/lineup.conf", "./usr/lib/sysusers.d/lineup-web.conf",
            "./usr/lib/tmpfiles.d/lineup.conf", "./usr/lib/tmpfiles.d/lineup-web.conf",
            "./usr/share/doc/lineup/examples/pi4-5-stations.toml",
            "./usr/share/doc/lineup/examples/pi5-5-stations.toml",
            "./usr/share/doc/lineup/README.Debian", "./usr/share/doc/lineup/changelog.gz",
            "./usr/share/bash-completion/completions/lineupctl", "./usr/share/zsh/vendor-completions/_lineupctl",
            "./usr/share/fish/vendor_completions.d/lineupctl.fish",
        ]
        for file in files { #expect(entries[file]?.mode == "-rw-r--r--", "\(file): \(entries[file].debugDescription)") }
        // One Swift runtime for the five binaries: the core, Foundation and ICU's data once.
        for library in ["libswiftCore.so", "libFoundation.so", "libFoundationEssentials.so", "lib_FoundationICU.so"] {
            let file = "./usr/lib/lineup/swift/\(library)"
            #expect(entries[file]?.mode == "-rw-r--r--", "\(file): \(entries[file].debugDescription)")
        }
        #expect(!entries.keys.contains { $0.hasPrefix("./usr/local") || $0.hasPrefix("./etc") }, "\(listing.output)")

        // The units run the binaries where the package puts them.
        let unpacked = out.appendingPathComponent("root")
        #expect(try run("/usr/bin/dpkg-deb", ["-x", deb, unpacked.path]).status == 0)
        for (unit, binary) in [
            ("lineupd", "lineupd"), ("lineup-web", "lineup-web"), ("lineup-sync", "lineup-sync"),
            ("lineup-alerts", "lineup-alerts"),
        ] {
            let text = try String(
                contentsOf: unpacked.appendingPathComponent("usr/lib/systemd/system/\(unit).service"), encoding: .utf8)
            #expect(text.contains("\nExecStart=/usr/bin/\(binary) "), "\(unit).service")
            #expect(!text.contains("/usr/local"), "\(unit).service")
        }
        // The installed lineupctl has no benchmarks: `bench` is refused as an unknown command and
        // neither its help nor its completions offer it (they are lineup-bench's, never installed).
        let installed = unpacked.appendingPathComponent("usr/bin/lineupctl").path
        let bench = try run(installed, ["bench", "click"])
        #expect(bench.status != 0)
        #expect(
            bench.errors.lowercased().contains("unexpected argument") && bench.errors.contains("'bench'"),
            "\(bench.errors)")
        let help = try run(installed, ["--help"])
        #expect(help.status == 0, "\(help.errors)")
        #expect(help.output.contains("selftest"), "\(help.output)")
        #expect(!help.output.contains("bench"), "\(help.output)")
        let completion = try String(
            contentsOf: unpacked.appendingPathComponent("usr/share/bash-completion/completions/lineupctl"),
            encoding: .utf8)
        #expect(completion.contains("lineupctl"))
        #expect(!completion.contains("bench"), "the completions offer bench")
        // bash sources a completion: no #! line (lintian's bash-completion-with-hashbang).
        #expect(!completion.hasPrefix("#!"), "\(completion.prefix(40))")
        // A native package's changelog, its version the package's (lintian's no-changelog).
        let changelog = try run(
            "/bin/gzip", ["-dc", unpacked.appendingPathComponent("usr/share/doc/lineup/changelog.gz").path])
        #expect(changelog.status == 0, "\(changelog.errors)")
        #expect(changelog.output.hasPrefix("lineup (\(version)) unstable; urgency=medium\n"), "\(changelog.output)")
        try checkTheBinariesLoadThePackagesOwnRuntime(unpacked: unpacked, scratch: out)
    }

    /// --max-installed-size: a package larger than the limit is refused, with its size and its
    /// biggest files named, and none is left.
    @Test func aPackageOverItsSizeIsRefused() throws {
        guard tools() else { return }
        let out = try scratch()
        defer { try? FileManager.default.removeItem(at: out) }
        let build = try run(
            script,
            ["--bin-dir", debug, "--no-manual", "--uncompressed", "--max-installed-size", "80", "--out", out.path])
        // The debug binaries alone are far over 80 MB: the limit the release package is held to.
        #expect(build.status != 0)
        #expect(
            build.errors.contains("KB, over --max-installed-size 80 MB (81920 KB); the biggest files: "),
            "\(build.errors)")
        #expect(build.errors.contains("usr/bin/lineup-net "), "\(build.errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
        let bad = try run(script, ["--bin-dir", debug, "--max-installed-size", "eighty", "--out", out.path])
        #expect(bad.status != 0)
        #expect(
            bad.errors == "packaging/deb/build.sh: --max-installed-size takes a whole number of MB, not 'eighty'\n",
            "\(bad.errors)")
    }

    @Test func aMissingBinaryIsNamed() throws {
        guard tools() else { return }
        let out = try scratch()
        defer { try? FileManager.default.removeItem(at: out) }
        let empty = try scratch()
        defer { try? FileManager.default.removeItem(at: empty) }
        let build = try run(script, ["--bin-dir", empty.path, "--out", out.path])
        #expect(build.status != 0)
        #expect(build.errors == "packaging/deb/build.sh: \(empty.path)/lineupd is not built\n", "\(build.errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
    }
}

// Module StationIO: see Package.swift for its concern.

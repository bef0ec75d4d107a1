// Module SessionLog: see Package.swift for its concern.

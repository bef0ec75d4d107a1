// Module VirtualDog: see Package.swift for its concern.

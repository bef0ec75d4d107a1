print("lineupctl: not built yet")

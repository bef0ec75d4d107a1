print("lineupd: not built yet")

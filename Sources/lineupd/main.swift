import Glibc

// The daemon itself (the real-time station on a board, its control socket, systemd
// notification, and `--simulate`) is issue 5 and not built yet. Until it is, say so plainly
// rather than pretend: the parts it will put together already run through lineupctl.
let message = """
    lineupd: the daemon is not built yet (issue 5). What runs today:
      lineupctl bench block --trials 2000    a simulated automated block: engine and virtual dog, virtual time
      lineupctl bench click                  the simulated lineup clicking through the real ALSA library
      lineupctl selftest --config FILE       a real board's lines, a test click and the rig's latency

    """
var bytes = Array(message.utf8)
_ = write(2, &bytes, bytes.count)
exit(2)

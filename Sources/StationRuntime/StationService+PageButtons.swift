import StationControl
import StationIO

/// The station page's clicker and error buttons: `press` over the control socket, handed to
/// the hot loop as the board's own button line's edges (`PageButtons`), so the engine clicks
/// and records it exactly as a press of the physical button.
extension StationService {
    public func press(_ press: ButtonPress) throws(ControlRefusal) {
        let line: UInt32?
        switch press.button.lowercased() {
        case "clicker": line = inputs.line(of: .clicker)
        case "error": line = inputs.line(of: .errorButton)
        default: throw ControlRefusal(.badRequest, "no button \"\(press.button)\": press clicker or error")
        }
        guard let line else {
            // The press is read as the button line's edge: a board without the line has no path for it.
            throw ControlRefusal(
                .unknown, "this board has no \(press.button) button line ([buttons] in its configuration)")
        }
        guard pageButtons.press(line: line) else {
            throw ControlRefusal(.failed, "the hot loop is behind: the press was not taken; press again")
        }
    }

    /// The board's clicker and error lines, the ones the page may press.
    static func pageButtonLines(_ inputs: InputMap) -> [UInt32] {
        [inputs.line(of: .clicker), inputs.line(of: .errorButton)].compactMap { $0 }
    }
}

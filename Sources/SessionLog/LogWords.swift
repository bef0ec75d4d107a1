import GRDB
import TrainingEngine

// Reading the log's words (an outcome, a mode, a sample's kind) back into their types. The
// schema's CHECKs keep other words out of a log this lineup writes; a log from a newer lineup,
// or one edited by hand, may still hold one, and the researcher is told where, not crashed on.

extension Row {
    /// The word in `column` as `Word`, or `SessionLogError.unknownWord` naming the table and the
    /// row (`id`) that holds it.
    func word<Word: RawRepresentable & CaseIterable>(
        _ column: String, of table: String, row id: String
    ) throws -> Word where Word.RawValue == String {
        let text: String = self[column]
        guard let word = Word(rawValue: text) else {
            throw SessionLogError.unknownWord(
                table: table, row: id, column: column, value: text, known: Word.allCases.map(\.rawValue))
        }
        return word
    }
}

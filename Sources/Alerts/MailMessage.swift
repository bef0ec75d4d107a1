import Foundation

/// An alert as an e-mail (RFC 5322), ready for SMTP's DATA: CRLF line ends, dot-stuffed, the
/// subject encoded when it is not ASCII (RFC 2047), the body base64 when it is not.
public struct MailMessage: Sendable, Hashable {
    public var from: String
    public var to: [String]
    public var subject: String
    public var body: String
    public var date: Date
    public var messageID: String

    public init(from: String, to: [String], subject: String, body: String, date: Date, messageID: String) {
        self.from = from
        self.to = to
        self.subject = subject
        self.body = body
        self.date = date
        self.messageID = messageID
    }

    public init(notice: AlertNotice, from: String, to: [String], messageID: String) {
        self.init(
            from: from, to: to, subject: AlertFormats.subject(notice), body: AlertFormats.body(notice),
            date: notice.at, messageID: messageID)
    }

    /// What follows DATA, up to and including the lone dot that ends it.
    public var data: String {
        var headers = [
            "From: \(from)", "To: \(to.joined(separator: ", "))", "Subject: \(Self.header(subject))",
            "Date: \(Self.rfc5322(date))", "Message-ID: <\(messageID)>", "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
        ]
        let lines: [String]
        if body.unicodeScalars.allSatisfy(\.isASCII) {
            headers.append("Content-Transfer-Encoding: 7bit")
            lines = body.replacingOccurrences(of: "\r\n", with: "\n").split(
                separator: "\n", omittingEmptySubsequences: false
            )
            .map { $0.hasPrefix(".") ? "." + $0 : String($0) }
        } else {
            headers.append("Content-Transfer-Encoding: base64")
            let encoded = Data(body.utf8).base64EncodedString()
            lines = stride(from: 0, to: encoded.count, by: 76).map {
                let start = encoded.index(encoded.startIndex, offsetBy: $0)
                return String(
                    encoded[
                        start..<(encoded.index(start, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex)])
            }
        }
        return (headers + [""] + lines + ["."]).joined(separator: "\r\n") + "\r\n"
    }

    /// A header value as is when it is printable ASCII, else one RFC 2047 encoded word per 45 bytes.
    static func header(_ text: String) -> String {
        if text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 }) { return text }
        var words: [String] = []
        var chunk = ""
        for character in text {
            if (chunk + String(character)).utf8.count > 45 {
                words.append(chunk)
                chunk = ""
            }
            chunk.append(character)
        }
        if !chunk.isEmpty { words.append(chunk) }
        return words.map { "=?UTF-8?B?\(Data($0.utf8).base64EncodedString())?=" }.joined(separator: "\r\n ")
    }

    /// `Fri, 27 Nov 2026 10:42:07 +0000`.
    static func rfc5322(_ date: Date) -> String {
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "UTC")
        format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return format.string(from: date)
    }
}

/// A JSON object printed with its keys in insertion order, for figures a person also reads:
/// `lineupctl selftest --json` and lineup-bench's benchmarks. Here, a module both link, so that
/// its quoting has one home.
public struct JSONObject {
    public init() {}

    private var entries: [(String, Any)] = []

    public subscript(key: String) -> Any? {
        get { entries.first { $0.0 == key }?.1 }
        set {
            entries.removeAll { $0.0 == key }
            if let newValue { entries.append((key, newValue)) }
        }
    }

    public func render() -> String {
        "{" + entries.map { "\(Self.quote($0.0)):\(Self.value($0.1))" }.joined(separator: ",") + "}"
    }

    public static func value(_ v: Any) -> String {
        switch v {
        case let s as String: return quote(s)
        case let b as Bool: return b ? "true" : "false"
        case let i as Int: return String(i)
        case let d as Double: return d.isFinite ? String(d) : "null"
        case let o as JSONObject: return o.render()
        default: return quote(String(describing: v))
        }
    }

    public static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case let c where c.value < 0x20:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(c.value, radix: 16).count)
                    + String(c.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

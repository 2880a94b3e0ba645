import Foundation

extension JSON {
    /// A value as `JSONSerialization` reads it (objects' keys sorted, as it keeps no order);
    /// nil for anything that is not JSON.
    package init?(parsed value: Any) {
        switch value {
        case let object as [String: Any]:
            var members: [(String, JSON)] = []
            for key in object.keys.sorted() {
                guard let member = JSON(parsed: object[key] as Any) else { return nil }
                members.append((key, member))
            }
            self = .object(members)
        case let array as [Any]:
            var items: [JSON] = []
            for item in array {
                guard let parsed = JSON(parsed: item) else { return nil }
                items.append(parsed)
            }
            self = .array(items)
        case let text as String: self = .string(text)
        case is NSNull: self = .null
        case let number as NSNumber:
            // JSONSerialization reads true and false as NSNumber too, of a class of their own.
            if type(of: number) == type(of: NSNumber(value: true)) {
                self = .bool(number.boolValue)
            } else if let whole = Int64(number.stringValue) {
                // An integer exactly as written (through a double, 2^53 + 1 would come back 2^53).
                self = .int(whole)
            } else {
                self = .number(number.doubleValue)
            }
        default: return nil
        }
    }
}

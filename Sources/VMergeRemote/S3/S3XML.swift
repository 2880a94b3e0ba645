import Foundation
import VMergeCore

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An S3 answer's XML as a tree of elements (names without namespaces, text trimmed): S3's answers
/// are small and flat, and read by element name. Parsed by Foundation's XMLParser (libxml2 on
/// Linux), with external entities off.
struct S3XML: Sendable {
    var name: String
    var text = ""
    var children: [S3XML] = []

    /// The first child with this name.
    subscript(_ child: String) -> S3XML? { children.first { $0.name == child } }

    /// Every child with this name, in order.
    func all(_ child: String) -> [S3XML] { children.filter { $0.name == child } }

    /// The root element, or nil when the bytes are not XML.
    static func parse(_ data: Data) -> S3XML? {
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        let builder = Builder()
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else { return nil }
        return root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [S3XML] = []
        var root: S3XML?

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            let local = elementName.split(separator: ":").last.map(String.init) ?? elementName
            stack.append(S3XML(name: local))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
        ) {
            guard var element = stack.popLast() else { return }
            element.text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
            if stack.isEmpty {
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }
    }
}

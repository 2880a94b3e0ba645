import VMergeCore

/// The API's OpenAPI 3.1 document, served at /api/v1/openapi.json.
enum OpenAPIDocument {
    static var json: JSON {
        .object([
            ("openapi", .string("3.1.0")),
            ("info", .object([("title", .string("vmerge job API")), ("version", .string("1"))])),
            ("paths", .object([])),
        ])
    }
}

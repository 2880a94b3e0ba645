import VMergeCore
import VMergeQueue

/// The API's OpenAPI 3.1 document, served at /api/v1/openapi.json. The job body's options are
/// made from `JobOption.all`, the rows the command line, job lists and the Swift API read, so
/// the document cannot name an option they do not take, nor miss one.
enum OpenAPIDocument {
    static var json: JSON {
        .object([
            ("openapi", .string("3.1.0")),
            (
                "info",
                .object([
                    ("title", .string("vmerge job API")), ("version", .string("1")),
                    (
                        "description",
                        .string(
                            "Submit merges to vmerge's queue and follow them. Every operation but this document "
                                + "needs 'Authorization: Bearer TOKEN': the dashboard's --token-file token (every "
                                + "scope) or one of --api-tokens, whose scopes are read, submit and operate.")
                    ),
                ])
            ),
            // The paths below are under /api/v1 on the dashboard's own address.
            ("servers", .array([.object([("url", .string("/api/v1"))])])),
            ("paths", paths),
            (
                "components",
                .object([
                    ("schemas", schemas),
                    (
                        "securitySchemes",
                        .object([("bearer", .object([("type", .string("http")), ("scheme", .string("bearer"))]))])
                    ),
                ])
            ),
            ("security", .array([.object([("bearer", .array([]))])])),
        ])
    }

    private static var paths: JSON {
        let id = parameter(
            "id", in: "path", required: true, schema: .object([("type", .string("integer")), ("minimum", .int(1))]))
        return .object([
            (
                "/jobs",
                .object([
                    (
                        "post",
                        operation(
                            "submitJob", scope: .submit,
                            summary: "Add a job: a job-list line, as 'vmerge queue add' takes it, with absolute paths",
                            parameters: [
                                parameter(
                                    "Idempotency-Key", in: "header", required: false,
                                    schema: .object([("type", .string("string")), ("maxLength", .int(255))]))
                            ],
                            body: ref("JobRequest"),
                            responses: [
                                ("201", "the job, added", ref("Job")),
                                ("200", "the same job, added before (or a repeat of the Idempotency-Key)", ref("Job")),
                                (
                                    "403",
                                    "a name outside the folders and prefixes the operator allows, or a token "
                                        + "without the submit scope", ref("Error")
                                ),
                                (
                                    "409", "the same job is queued already, with other receivers or metadata",
                                    ref("Error")
                                ),
                                ("413", "the body is larger than 256 KiB", ref("Error")),
                                ("415", "the body is not JSON", ref("Error")),
                                ("422", "not a job, or the Idempotency-Key was used for another request", ref("Error")),
                                ("429", "the queue holds as many waiting jobs as the operator allows", ref("Error")),
                            ])
                    ),
                    (
                        "get",
                        operation(
                            "listJobs", scope: .read, summary: "Jobs, newest first, a page at a time",
                            parameters: [
                                parameter(
                                    "state", in: "query", required: false,
                                    schema: .object([("type", .string("string")), ("enum", states)])),
                                parameter(
                                    "name", in: "query", required: false, schema: .object([("type", .string("string"))])
                                ),
                                parameter(
                                    "after", in: "query", required: false,
                                    schema: .object([("type", .string("integer")), ("minimum", .int(1))])),
                                parameter(
                                    "limit", in: "query", required: false,
                                    schema: .object([
                                        ("type", .string("integer")), ("minimum", .int(1)),
                                        ("maximum", .int(JobQueue.pageLimit)),
                                    ])),
                            ],
                            responses: [
                                ("200", "a page of jobs; next_after is the next page's after", ref("JobList")),
                                ("400", "a parameter out of its range", ref("Error")),
                            ])
                    ),
                ])
            ),
            (
                "/jobs/{id}",
                .object([
                    (
                        "get",
                        operation(
                            "getJob", scope: .read, summary: "A job: its state, progress, error and report",
                            parameters: [id],
                            responses: [("200", "the job", ref("Job")), ("404", "no such job", ref("Error"))])
                    )
                ])
            ),
            ("/jobs/{id}/cancel", action("cancelJob", "Cancel a queued or running job", parameters: [id])),
            ("/jobs/{id}/retry", action("retryJob", "Queue a failed or cancelled job again", parameters: [id])),
            (
                "/queue/pause",
                action("pauseQueue", "Pause the queue: workers claim no new jobs", parameters: [], result: ref("Pause"))
            ),
            ("/queue/resume", action("resumeQueue", "Resume the queue", parameters: [], result: ref("Pause"))),
        ])
    }

    private static func action(_ id: String, _ summary: String, parameters: [JSON], result: JSON = ref("Job")) -> JSON {
        // A job's action can find no job, or a job it does not apply to; the queue's cannot.
        let jobs: [(String, String, JSON?)] =
            parameters.isEmpty
            ? []
            : [
                ("404", "no such job", ref("Error")),
                ("409", "the job is in a state this does not apply to", ref("Error")),
            ]
        return .object([
            (
                "post",
                operation(
                    id, scope: .operate, summary: summary, parameters: parameters,
                    responses: [("200", "done", result)] + jobs)
            )
        ])
    }

    private static func operation(
        _ id: String, scope: APIScope, summary: String, parameters: [JSON], body: JSON? = nil,
        responses: [(String, String, JSON?)]
    ) -> JSON {
        let common: [(String, String, JSON?)] = [
            ("401", "no token, or not a token of this server", ref("Error")),
            ("503", "the database cannot be read", ref("Error")),
        ]
        var fields: [(String, JSON)] = [
            ("operationId", .string(id)), ("summary", .string(summary)),
            ("description", .string("Scope: \(scope.rawValue).")), ("parameters", .array(parameters)),
        ]
        if let body {
            fields.append(
                (
                    "requestBody",
                    .object([
                        ("required", .bool(true)),
                        ("content", .object([("application/json", .object([("schema", body)]))])),
                    ])
                ))
        }
        let all = responses + (scope == .read ? common : common + [("403", "the token lacks the scope", ref("Error"))])
        var seen: Set<String> = []
        fields.append(
            (
                "responses",
                .object(
                    all.compactMap { status, description, schema in
                        guard seen.insert(status).inserted else { return nil }
                        var response: [(String, JSON)] = [("description", .string(description))]
                        if let schema {
                            response.append(("content", .object([("application/json", .object([("schema", schema)]))])))
                        }
                        return (status, .object(response))
                    })
            ))
        return .object(fields)
    }

    private static func parameter(_ name: String, in place: String, required: Bool, schema: JSON) -> JSON {
        .object([("name", .string(name)), ("in", .string(place)), ("required", .bool(required)), ("schema", schema)])
    }

    private static func ref(_ name: String) -> JSON { .object([("$ref", .string("#/components/schemas/\(name)"))]) }

    private static var states: JSON { .array(QueueState.allCases.map { .string($0.rawValue) }) }

    private static func type(_ name: String) -> JSON { .object([("type", .string(name))]) }

    private static func nullable(_ name: String) -> JSON {
        .object([("type", .array([.string(name), .string("null")]))])
    }
}

extension OpenAPIDocument {
    /// The options a job may carry, one property per `JobOption` row (`min-duration`; JSON keys
    /// may spell it `min_duration` too).
    static var options: JSON {
        .object([
            ("type", .string("object")), ("additionalProperties", .bool(false)),
            (
                "properties",
                .object(
                    JobOption.all.map { option in
                        let value: [(String, JSON)] =
                            switch option.kind {
                            case .flag: [("type", .string("boolean"))]
                            case .number: [("type", .array([.string("number"), .string("string")]))]
                            case let .choice(words):
                                [("type", .string("string")), ("enum", .array(words.map { .string($0) }))]
                            case .fileName, .text: [("type", .string("string"))]
                            }
                        return (option.name, .object(value + [("description", .string(option.help))]))
                    })
            ),
        ])
    }

    fileprivate static var schemas: JSON {
        let input = JSON.object([
            ("type", .string("object")), ("required", .array([.string("path")])),
            ("additionalProperties", .bool(false)),
            (
                "properties",
                .object([
                    ("path", type("string")),
                    ("start", .object([("type", .array([.string("number"), .string("string")]))])),
                    ("end", .object([("type", .array([.string("number"), .string("string")]))])),
                    ("title", type("string")),
                ])
            ),
        ])
        return .object([
            (
                "JobRequest",
                .object([
                    ("type", .string("object")), ("required", .array([.string("inputs"), .string("output")])),
                    ("additionalProperties", .bool(false)),
                    (
                        "properties",
                        .object([
                            ("name", type("string")),
                            (
                                "inputs",
                                .object([
                                    ("type", .string("array")), ("minItems", .int(1)),
                                    ("items", .object([("oneOf", .array([type("string"), input]))])),
                                ])
                            ),
                            ("output", type("string")), ("options", options),
                            (
                                "notify",
                                .object([
                                    ("type", .string("array")), ("maxItems", .int(JobFile.maxNotify)),
                                    (
                                        "items",
                                        .object([("type", .string("string")), ("pattern", .string("^https://"))])
                                    ),
                                    ("description", .string("https URLs the job's events go to, signed")),
                                ])
                            ),
                            (
                                "metadata",
                                .object([
                                    ("type", .string("object")),
                                    ("description", .string("given back as it came in every event of the job")),
                                ])
                            ),
                            (
                                "renditions",
                                .object([
                                    ("type", .string("array")), ("minItems", .int(1)),
                                    ("maxItems", .int(JobFile.maxRenditions)),
                                    ("items", type("string")),
                                    (
                                        "description",
                                        .string(
                                            "more files of the same merge, decoded once: a preset ("
                                                + Rendition.Preset.allCases.map(\.rawValue).joined(separator: ", ")
                                                + ") or WIDTHxHEIGHT, then any of :crf=N, :fit=crop|pad|blur, "
                                                + ":preset=NAME, then =FILE (a name beside the output)")
                                    ),
                                ])
                            ),
                        ])
                    ),
                ])
            ),
            (
                "Job",
                .object([
                    ("type", .string("object")),
                    ("required", .array(["id", "name", "state", "attempts", "max_attempts"].map { .string($0) })),
                    (
                        "properties",
                        .object([
                            ("id", type("integer")), ("name", type("string")),
                            ("state", .object([("type", .string("string")), ("enum", states)])),
                            ("attempts", type("integer")), ("max_attempts", type("integer")),
                            ("worker", nullable("string")),
                            ("created_at", nullable("string")), ("started_at", nullable("string")),
                            ("finished_at", nullable("string")),
                            ("inputs", .object([("type", .string("array")), ("items", type("string"))])),
                            ("output", nullable("string")), ("progress", nullable("object")),
                            ("error", nullable("string")),
                            (
                                "report",
                                .object([
                                    ("type", .array([.string("object"), .string("null")])),
                                    ("description", .string("the last attempt's report (schema/report.schema.json)")),
                                ])
                            ),
                        ])
                    ),
                ])
            ),
            (
                "JobList",
                .object([
                    ("type", .string("object")),
                    ("required", .array([.string("jobs"), .string("total"), .string("next_after")])),
                    (
                        "properties",
                        .object([
                            (
                                "jobs",
                                .object([
                                    ("type", .string("array")),
                                    (
                                        "items",
                                        .object([
                                            ("type", .string("object")),
                                            (
                                                "required",
                                                .array([.string("id"), .string("name"), .string("state")])
                                            ),
                                            (
                                                "properties",
                                                .object([
                                                    ("id", type("integer")), ("name", type("string")),
                                                    (
                                                        "state",
                                                        .object([("type", .string("string")), ("enum", states)])
                                                    ),
                                                ])
                                            ),
                                        ])
                                    ),
                                ])
                            ),
                            ("total", type("integer")),
                            ("next_after", nullable("integer")),
                        ])
                    ),
                ])
            ),
            (
                "Pause",
                .object([
                    ("type", .string("object")),
                    ("properties", .object([("paused", type("boolean")), ("changed", type("boolean"))])),
                ])
            ),
            (
                "Error",
                .object([
                    ("type", .string("object")), ("required", .array([.string("error")])),
                    (
                        "properties",
                        .object([
                            (
                                "error",
                                .object([
                                    ("type", .string("object")),
                                    (
                                        "properties",
                                        .object([("status", type("integer")), ("message", type("string"))])
                                    ),
                                ])
                            )
                        ])
                    ),
                ])
            ),
        ])
    }
}

internal import CYAJL

/// Why `YAJLPushParser` stopped.
enum YAJLStop: Error {
    /// The document cannot be parsed, or a limit of the input filter was exceeded.
    case error(JSONParseError)
    /// A callback returned 0; the position is the last byte of the token that caused it.
    case canceled(offset: Int, line: Int, column: Int)
}

/// A yajl 2.1 push parser behind `JSONInputFilter`: owns the yajl handle (freed in `deinit`),
/// takes chunks of any size split anywhere, and turns yajl's results into `YAJLStop`. The events
/// go to a yajl callback table with its context pointer (SAX style, like libxml2's handler):
/// non-capturing closures that return 0 to stop the parse.
///
/// yajl options (yajl_parse.h `yajl_config`): comments off, UTF-8 validation on (a second check
/// behind the filter's repairs), trailing garbage, multiple values and partial values all off.
/// Numbers come through the `yajl_number` callback as text, so none is converted to `Double`.
final class YAJLPushParser {
    private var handle: yajl_handle?
    /// yajl keeps a pointer to the table, so it lives as long as the parser.
    private let callbacks: UnsafeMutablePointer<yajl_callbacks>
    private let context: UnsafeMutableRawPointer
    let filter: JSONInputFilter

    /// Largest piece filtered and given to yajl at once: bounds the filter's buffer for any
    /// chunk size.
    static let pieceSize = 256 * 1024

    /// `context` is passed to every callback and must stay valid as long as the parser.
    init(callbacks table: yajl_callbacks, context: UnsafeMutableRawPointer, limits: JSONLimits) {
        filter = JSONInputFilter(limits: limits)
        self.context = context
        callbacks = .allocate(capacity: 1)
        callbacks.initialize(to: table)
    }

    deinit {
        if let handle { yajl_free(handle) }
        callbacks.deinitialize(count: 1)
        callbacks.deallocate()
    }

    /// Filters and parses the next chunk; events for every token it completes are delivered
    /// before it returns.
    func parse(_ chunk: UnsafeRawBufferPointer) throws(YAJLStop) {
        guard let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), chunk.count > 0 else { return }
        var offset = 0
        while offset < chunk.count {
            let n = min(Self.pieceSize, chunk.count - offset)
            // The failure's position is taken before feeding discards the output it refers to;
            // an error yajl finds in the bytes before it comes first.
            let failure = filter.process(base + offset, n).map(failureError)
            try feedReady()
            if let failure { throw failure }
            offset += n
        }
    }

    /// Ends the document: checks it ended after one complete value.
    func finish() throws(YAJLStop) {
        if let failure = filter.finish().map(failureError) {
            try feedReady()
            throw failure
        }
        try feedReady()
        let h = try currentHandle()
        let status = yajl_complete_parse(h)
        if status != yajl_status_ok {
            let end = filter.position(ofOut: filter.count)
            if status == yajl_status_client_canceled {
                throw .canceled(offset: end.offset, line: end.line, column: end.column)
            }
            let text = yajlMessage(h)
            if text.hasSuffix("premature EOF") {
                let open = filter.openContainers
                let message = open > 0
                    ? "the document ended with \(open == 1 ? "an object or array" : "\(open) objects or arrays") still open: it is truncated"
                    : "the document ended before its value was complete: it is truncated"
                throw .error(JSONParseError(kind: .truncated, offset: end.offset, line: end.line, column: end.column, message: message))
            }
            throw .error(JSONParseError(kind: .malformed, offset: end.offset, line: end.line, column: end.column, message: describeYAJLError(text, near: nil)))
        }
    }

    /// Forgets the document: a new yajl handle is made for the next one.
    func reset() {
        if let handle { yajl_free(handle) }
        handle = nil
        filter.reset()
    }

    // MARK: - Private

    private func currentHandle() throws(YAJLStop) -> yajl_handle {
        if let handle { return handle }
        guard let h = yajl_alloc(callbacks, nil, context) else {
            throw .error(JSONParseError(kind: .malformed, message: "yajl could not allocate a parser (out of memory)"))
        }
        _ = cyajl_config(h, yajl_allow_comments, 0)
        _ = cyajl_config(h, yajl_dont_validate_strings, 0)
        _ = cyajl_config(h, yajl_allow_trailing_garbage, 0)
        _ = cyajl_config(h, yajl_allow_multiple_values, 0)
        _ = cyajl_config(h, yajl_allow_partial_values, 0)
        handle = h
        return h
    }

    /// Gives yajl the filter's complete tokens, then drops them from the filter.
    private func feedReady() throws(YAJLStop) {
        let r = filter.ready
        guard r > 0 else { return }
        let h = try currentHandle()
        let status = yajl_parse(h, filter.bytes, r)
        if status != yajl_status_ok {
            let consumed = Int(yajl_get_bytes_consumed(h))
            if status == yajl_status_client_canceled {
                let at = filter.position(ofOut: max(0, consumed - 1))
                throw .canceled(offset: at.offset, line: at.line, column: at.column)
            }
            let text = yajlMessage(h)
            // Lexical errors point at the offending byte; grammar errors just past the token.
            let index = text.hasPrefix("lexical") ? consumed : max(0, consumed - 1)
            let at = filter.position(ofOut: min(index, r))
            let near: UInt8? = index < r ? filter.bytes[index] : nil
            throw .error(JSONParseError(kind: .malformed, offset: at.offset, line: at.line, column: at.column,
                                        message: describeYAJLError(text, near: near)))
        }
        filter.discard(r)
    }

    private func failureError(_ failure: JSONInputFilter.Failure) -> YAJLStop {
        // Bytes between the output position and the document offset (a skipped byte order mark)
        // hold no LF.
        let at = filter.position(ofOut: failure.out)
        return .error(JSONParseError(kind: failure.kind, offset: failure.original, line: at.line,
                                     column: at.column + max(0, failure.original - at.offset), message: failure.message))
    }

    /// yajl's one-line message without the document text (`verbose` 0).
    private func yajlMessage(_ h: yajl_handle) -> String {
        guard let raw = yajl_get_error(h, 0, nil, 0) else { return "parse error" }
        defer { yajl_free_error(h, raw) }
        var text = String(cString: raw)
        while text.last == "\n" { text.removeLast() }
        return text
    }
}

/// yajl's message made specific: which token, and what JSON allows instead.
private func describeYAJLError(_ text: String, near: UInt8?) -> String {
    var message = text
    for prefix in ["lexical error: ", "parse error: "] where message.hasPrefix(prefix) {
        message.removeFirst(prefix.count)
    }
    if message.hasSuffix(".") { message.removeLast() }
    switch message {
    case "invalid string in json text":
        return "an invalid literal: expected true, false or null"
    case "unallowed token at this point in JSON text":
        if let near { return "unexpected \(describe(near)) here (a value, key or bracket is missing or extra)" }
        return "unexpected token here (a value, key or bracket is missing or extra)"
    case "trailing garbage":
        return "data after the end of the JSON value: a JSON text is exactly one value (RFC 8259 §2)"
    default:
        return message
    }
}

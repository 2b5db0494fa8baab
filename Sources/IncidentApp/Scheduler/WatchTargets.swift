import CCrypto
import Foundation
import IncidentCore
import IncidentNetworking
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One change delivered to a watch's target (docs/analyst.md, "Watches"), with the watch's
/// retries: a webhook gets a POST of the change's JSON, signed; a command gets the JSON on its
/// standard input. An attempt succeeds on a 2xx answer or exit status 0; any other answer, exit
/// status, signal, or an attempt that outlasts the watch's `timeout` (the POST is cut, the
/// command's process group killed) is retried like a failed POST.
enum WatchTargets {
    /// How a delivery ended.
    enum Outcome: Equatable {
        case delivered
        /// Retries ran out: the last failure (`HTTP 503`, `exit status 2: …`, `timed out after 1 s`).
        case failed(String)
        /// Stopped by SIGTERM (not the target's failure).
        case cancelled
        /// The claim could not be renewed before an attempt: nothing was sent.
        case lost
    }

    /// Delivers `change` to `watch`'s target, retrying by the watch's policy; a webhook through
    /// `session` (``session(_:)``). `renew` runs before each attempt and renews this host's claim
    /// of the watch for longer than the attempt may take; when it returns false nothing more is sent.
    static func deliver(_ change: IncidentChange, to watch: WatchDefinition, session: URLSession, now: UTCInstant,
                        environment: [String: String], logger: Logger, renew: () async -> Bool) async -> Outcome {
        let body = Data(ChangesCommand.json(change, now: now).utf8)
        let signature = watch.secret.isEmpty ? nil : "sha256=" + hmacSHA256(key: watch.secret, body)
        let (name, cursor, kind) = (watch.name, change.transition.cursor, change.transition.kind.rawValue)
        var retry = 0
        while !Task.isCancelled {
            guard await renew() else { return .lost }
            let failure: String
            switch watch.target {
            case .webhook(let url):
                switch await post(body, to: url, signature: signature, change: change, watch: watch, session: session) {
                case .success(let status):
                    logger.log(.info, "watch.delivered", ["watch": name, "cursor": cursor, "kind": kind, "status": status, "attempt": retry + 1])
                    return .delivered
                case .failure(let reason): failure = reason.text
                }
            case .command(let arguments):
                var variables = environment
                variables["INCIDENTS_WATCH"] = name
                variables["INCIDENTS_CURSOR"] = String(cursor)
                variables["INCIDENTS_KIND"] = kind
                variables["INCIDENTS_SIGNATURE"] = signature
                switch await run(arguments, input: body, environment: variables, timeoutSeconds: watch.timeoutSeconds) {
                case .success:
                    logger.log(.info, "watch.delivered", ["watch": name, "cursor": cursor, "kind": kind, "exit": 0, "attempt": retry + 1])
                    return .delivered
                case .failure(let reason): failure = reason.text
                }
            }
            // Stopped by SIGTERM: not the target's failure.
            if Task.isCancelled { return .cancelled }
            guard retry < watch.retryPolicy.maxRetries else {
                logger.log(.error, "watch.delivery_failed", [
                    "watch": name, "cursor": cursor, "kind": kind, "attempt": retry + 1, "error": failure,
                    "detail": "retries exhausted; a later turn starts again at this transition",
                ])
                return .failed(failure)
            }
            let delay = watch.retryPolicy.delay(forRetry: retry, retryAfter: nil, unitRandom: Double.random(in: 0...1))
            logger.log(.warning, "watch.delivery_retry", [
                "watch": name, "cursor": cursor, "kind": kind, "attempt": retry + 1, "error": failure, "retry_in_s": delay,
            ])
            retry += 1
            try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
        }
        return .cancelled
    }

    /// Why an attempt failed, for the log and `incident-scheduler watches` (never a secret:
    /// redacted).
    struct Failure: Error {
        var text: String
    }

    // MARK: Webhooks

    /// The HTTP session of one turn of `watch` (``WatchDelivery``): its POSTs, one after another,
    /// share the session and, where the receiver keeps them open, its connections, instead of
    /// making both anew for each transition. Each exchange lasts at most the watch's timeout (a
    /// request's timeoutInterval alone is an idle timeout). End it with finishTasksAndInvalidate().
    static func session(_ watch: WatchDefinition) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = watch.timeoutSeconds
        configuration.timeoutIntervalForResource = watch.timeoutSeconds
        return URLSession(configuration: configuration)
    }

    /// One POST of `body` through `session` (``session(_:)``), within the watch's timeout: the
    /// HTTP status of a 2xx answer.
    static func post(_ body: Data, to url: URL, signature: String?, change: IncidentChange, watch: WatchDefinition,
                     session: URLSession) async -> Result<Int, Failure> {
        var request = URLRequest(url: url, timeoutInterval: watch.timeoutSeconds)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(signature, forHTTPHeaderField: "X-Incidents-Signature")
        request.setValue(String(change.transition.cursor), forHTTPHeaderField: "X-Incidents-Cursor")
        request.setValue(watch.name, forHTTPHeaderField: "X-Incidents-Watch")
        if let failure = Libcurl.loadFailure() { return .failure(Failure(text: failure)) }
        do {
            let (_, response) = try await session.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            return (200..<300).contains(status) ? .success(status) : .failure(Failure(text: "HTTP \(status)"))
        } catch let error as URLError where error.code == .timedOut {
            return .failure(Failure(text: "no answer within the watch's timeout (\(ValueParsers.durationText(Int64(watch.timeoutSeconds.rounded(.up)))))"))
        } catch {
            return .failure(Failure(text: Redaction.redact((error as NSError).localizedDescription)))
        }
    }

    /// HMAC-SHA256 (RFC 2104, FIPS 180-4) of `data` under the UTF-8 bytes of `key`, as lowercase
    /// hex (64 characters), by OpenSSL's libcrypto.
    static func hmacSHA256(key: String, _ data: Data) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let keyBytes = Array(key.utf8)
        data.withUnsafeBytes { bytes in
            _ = HMAC(EVP_sha256(), keyBytes, Int32(keyBytes.count), bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, &digest, &length)
        }
        return digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }

    // MARK: Commands

    /// The variables of the scheduler's environment a command inherits: where programs and
    /// files are and how text is written. No other: the sources' keys, the webhooks' secrets
    /// and a database password stay in the scheduler.
    static let inheritedVariables = ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"]

    static func commandEnvironment(_ environment: [String: String]) -> [String: String] {
        environment.filter { inheritedVariables.contains($0.key) }
    }

    /// Runs `arguments` (an executable's path, then its arguments; no shell) with `input` on its
    /// standard input (a file, so a program that does not read it cannot block the scheduler),
    /// its standard output discarded and its standard error kept for the failure's text (its
    /// last line, redacted). The program starts as from a shell: no signal blocked, every
    /// signal's action the default (``ProcessSignals/spawn(_:environment:input:output:error:)``),
    /// in a process group of its own, which is killed (SIGKILL) when it outlasts
    /// `timeoutSeconds` or the task is cancelled (SIGTERM to the scheduler).
    static func run(_ arguments: [String], input: Data, environment: [String: String], timeoutSeconds: Double) async -> Result<Void, Failure> {
        let program = arguments[0]
        let stdin: FileHandle, stdout: FileHandle, stderr: FileHandle
        let group: pid_t
        do {
            stdin = try anonymousFile(input)
            stderr = try anonymousFile(Data())
            stdout = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/null"))
            group = try ProcessSignals.spawn(arguments, environment: environment, input: stdin.fileDescriptor,
                                             output: stdout.fileDescriptor, error: stderr.fileDescriptor)
        } catch {
            return .failure(Failure(text: "cannot run \(program): \((error as? Failure)?.text ?? error.localizedDescription)"))
        }
        let state = CommandState(group: group)
        let status = await withTaskCancellationHandler {
            DispatchQueue.global().asyncAfter(deadline: .now() + timeoutSeconds) { state.kill(timedOut: true) }
            return await state.exitStatus()
        } onCancel: {
            state.kill(timedOut: false)
        }
        if state.value.withLock({ $0.timedOut }) {
            return .failure(Failure(text: "timed out after \(ValueParsers.durationText(Int64(timeoutSeconds.rounded(.up)))) (killed)"))
        }
        // The wait status (wait(2)): the low 7 bits are the signal that ended it, else bits 8–15 its exit status.
        if status & 0x7f != 0 {
            return .failure(Failure(text: "killed by signal \(status & 0x7f)" + lastLine(stderr)))
        }
        let exitStatus = (status >> 8) & 0xff
        return exitStatus == 0 ? .success(()) : .failure(Failure(text: "exit status \(exitStatus)" + lastLine(stderr)))
    }

    /// A command's process group (its pid) while it runs, and whether it was killed for its timeout.
    private final class CommandState: Sendable {
        struct Value {
            var finished = false
            var timedOut = false
        }
        let group: pid_t
        let value = Mutex(Value())

        init(group: pid_t) { self.group = group }

        /// SIGKILL to the process group when it still runs (noting first whether for the
        /// timeout, so the termination that follows finds it).
        func kill(timedOut: Bool) {
            value.withLock { value in
                guard !value.finished else { return }
                value.timedOut = timedOut
                _ = Glibc.kill(-group, SIGKILL)
            }
        }

        /// Waits, on a thread of its own, for the command to end, and returns its wait status.
        /// The command is marked finished before it is reaped, so that ``kill(timedOut:)``
        /// never signals a later process group that reuses its number.
        func exitStatus() async -> Int32 {
            await withCheckedContinuation { continuation in
                Thread { [self] in
                    var info = siginfo_t()
                    while waitid(P_PID, id_t(group), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
                    value.withLock { $0.finished = true }
                    var status: Int32 = 0
                    while waitpid(group, &status, 0) < 0 && errno == EINTR {}
                    continuation.resume(returning: status)
                }.start()
            }
        }
    }

    /// A file with `data`, already unlinked (only its descriptor names it), read from its start.
    private static func anonymousFile(_ data: Data) throws -> FileHandle {
        var template = Array((NSTemporaryDirectory() + "/incidents-watch-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        guard descriptor >= 0 else {
            throw Failure(text: "cannot make a temporary file in \(NSTemporaryDirectory()): \(String(cString: strerror(errno)))")
        }
        template.withUnsafeBufferPointer { buffer in if let path = buffer.baseAddress { unlink(path) } }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: data)
        try handle.seek(toOffset: 0)
        return handle
    }

    /// `: LINE`, the last non-empty line of what the command wrote to its standard error (its
    /// last 4 KB; at most 200 characters, redacted), or nothing.
    private static func lastLine(_ handle: FileHandle) -> String {
        guard let end = try? handle.seekToEnd(), (try? handle.seek(toOffset: end > 4096 ? end - 4096 : 0)) != nil,
              let data = try? handle.readToEnd() else { return "" }
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let line = lines.last(where: { !$0.isEmpty }) else { return "" }
        return ": " + Redaction.redact(String(line.prefix(200)))
    }
}

import Dispatch

/// A sleep that gives its memory back when it is cancelled.
///
/// Why not `Task.sleep`: on Linux (checked with Swift 6.3.1), a `Task.sleep` cancelled while
/// it waits keeps its timer, a task and a dispatch source (about 720 bytes) until the original
/// deadline passes (swiftlang/swift#60441). A scheduler that races every HTTP attempt against
/// a 5-minute bound and cancels the bound when the attempt ends thus grew by about 1 KB per
/// poll (issue 12, point 14). This sleep waits on a `DispatchSourceTimer`, which is cancelled
/// and freed at once.
public enum CancellableSleep {
    /// Sleeps for `seconds` (nothing for 0 or less).
    /// - Throws: `CancellationError` at once when the task is cancelled, before or during the wait.
    public static func sleep(seconds: Double) async throws {
        guard seconds > 0 else { return try Task.checkCancellation() }
        let wait = Wait()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                wait.start(continuation, seconds: seconds)
            }
        } onCancel: {
            wait.cancel()
        }
    }

    /// The timer and the continuation of one sleep; whichever of "fired" and "cancelled"
    /// comes first resumes the continuation, once.
    private final class Wait: @unchecked Sendable {  // state behind `state`'s lock
        private enum State {
            case idle
            case waiting(CheckedContinuation<Void, any Error>, any DispatchSourceTimer)
            case cancelled
            case finished
        }

        private let state = Locked(State.idle)

        func start(_ continuation: CheckedContinuation<Void, any Error>, seconds: Double) {
            // A dispatch source must be resumed before it is released (libdispatch traps on
            // releasing a suspended one), so it is set up and resumed before it is shared.
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.setEventHandler { [weak self] in self?.finish(throwing: nil) }
            timer.schedule(deadline: .now() + .nanoseconds(Int(min(seconds, 86_400 * 365) * 1_000_000_000)))
            let started = state.withLock { state -> Bool in
                guard case .idle = state else { return false }
                state = .waiting(continuation, timer)
                return true
            }
            timer.resume()
            guard started else {
                timer.cancel()
                return continuation.resume(throwing: CancellationError())
            }
        }

        func cancel() {
            finish(throwing: CancellationError())
        }

        private func finish(throwing error: (any Error)?) {
            let waiting = state.withLock { state -> (CheckedContinuation<Void, any Error>, any DispatchSourceTimer)? in
                switch state {
                case .waiting(let continuation, let timer):
                    state = error == nil ? .finished : .cancelled
                    return (continuation, timer)
                case .idle:
                    if error != nil { state = .cancelled }
                    return nil
                case .cancelled, .finished:
                    return nil
                }
            }
            guard let (continuation, timer) = waiting else { return }
            timer.cancel()
            if let error { continuation.resume(throwing: error) } else { continuation.resume() }
        }
    }
}
